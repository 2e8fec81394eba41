package segment

import "math"

// SetLimits changes the size, age and retention limits of an open log, for
// a topic config altered at run time (AlterConfigs): the next append rolls
// by the new segment size and age, the next retention pass deletes by the
// new retention. Other options keep the values Open gave them.
func (l *Log) SetLimits(o Options) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o.SegmentBytes > 0 {
		l.opts.SegmentBytes = min(o.SegmentBytes, math.MaxInt32)
	}
	l.opts.SegmentAge = o.SegmentAge
	l.opts.RetentionAge = o.RetentionAge
	l.opts.RetentionBytes = o.RetentionBytes
}
