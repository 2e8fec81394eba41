package compact

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// Plan is what a log offers the cleaner (Kafka's LogToClean): the range
// [FirstDirty, FirstUncleanable) not cleaned yet, and the bytes before
// and in it.
type Plan struct {
	FirstDirty       int64 // the checkpoint, clamped to the log
	FirstUncleanable int64 // the active segment, or the first segment younger than min.compaction.lag.ms
	CleanBytes       int64 // bytes of the segments below FirstDirty
	DirtyBytes       int64 // bytes of the segments in [FirstDirty, FirstUncleanable)
	// MustClean is true when the first dirty segment is older than
	// max.compaction.lag.ms: it is cleaned whatever its ratio.
	MustClean bool
}

// Ratio is the dirty ratio: DirtyBytes over all cleanable bytes.
func (p Plan) Ratio() float64 {
	if p.CleanBytes+p.DirtyBytes == 0 {
		return 0
	}
	return float64(p.DirtyBytes) / float64(p.CleanBytes+p.DirtyBytes)
}

// Cleanable reports whether a cleaning is due: something dirty, and a
// ratio of at least minRatio or MustClean (Kafka's
// grabFilthiestCompactedLog filter).
func (p Plan) Cleanable(minRatio float64) bool {
	return p.DirtyBytes > 0 && (p.MustClean || p.Ratio() >= minRatio)
}

// PlanLog computes the plan of a log from its closed segments, start
// offset and cleaner checkpoint (-1 if none), as Kafka's
// LogCleanerManager.cleanableOffsets: the checkpoint is reset to the log
// start if it is below it or past the log; segments whose newest batch is
// younger than minLag are not cleanable, nor is anything after them.
// Kafka takes max.compaction.lag.ms from the first batch of the first dirty
// segment; zkafka has each segment's max timestamp only and uses that.
func PlanLog(segs []segment.SegmentInfo, start, checkpoint int64, now time.Time, minLag, maxLag time.Duration) Plan {
	var p Plan
	if len(segs) == 0 {
		return Plan{FirstDirty: start, FirstUncleanable: start}
	}
	end := segs[len(segs)-1].Next // the active segment's base
	p.FirstDirty = checkpoint
	if checkpoint < start || checkpoint > end {
		p.FirstDirty = start
	}
	p.FirstUncleanable = end
	nowMs := now.UnixMilli()
	for _, s := range segs {
		if s.Next <= p.FirstDirty {
			continue
		}
		if minLag > 0 && s.MaxTimestamp > nowMs-minLag.Milliseconds() {
			p.FirstUncleanable = max(s.Base, p.FirstDirty)
			break
		}
	}
	first := true
	for _, s := range segs {
		switch {
		case s.Next <= p.FirstDirty:
			p.CleanBytes += s.Size
		case s.Base < p.FirstUncleanable:
			p.DirtyBytes += s.Size
			if first && maxLag > 0 && maxLag < math.MaxInt64 && s.MaxTimestamp != math.MinInt64 &&
				s.MaxTimestamp < nowMs-maxLag.Milliseconds() {
				p.MustClean = true
			}
			first = false
		}
	}
	return p
}

// Options of one cleaning.
type Options struct {
	Map             *OffsetMap
	Throttle        *Throttler // nil: unthrottled
	Now             time.Time
	DeleteRetention time.Duration // delete.retention.ms
	SegmentBytes    int64         // segment.bytes: the most a group of cleaned segments may hold
	Producers       map[int64]ProducerLast
	// Abort, when closed, stops the cleaning with ErrAborted (the log
	// is left as it is: groups already swapped in stay).
	Abort <-chan struct{}

	afterCommit func() // tests: called after each group is swapped in
}

// Stats of one cleaning.
type Stats struct {
	BytesRead, BytesWritten  int64
	RecordsRead, RecordsKept int64
	Segments, Groups         int
	MapKeys                  int
}

var errStop = errors.New("stop")

// ErrAborted is returned by Clean when Options.Abort was closed.
var ErrAborted = errors.New("compact: cleaning aborted")

// aborted reports whether the cleaning must stop.
func (o *Options) aborted() bool {
	select {
	case <-o.Abort:
		return true
	default:
		return false
	}
}

// ErrBufferTooSmall: not even one batch's keys fit in the offset map.
var ErrBufferTooSmall = errors.New("compact: log.cleaner.dedupe.buffer.size too small for one batch")

// Clean cleans l as Kafka's Cleaner.doClean: it builds the offset map of
// the dirty range (as much of it as the map holds), then rewrites every
// closed segment from the start up to the end of what the map covers, in
// groups that fit in SegmentBytes, keeping the latest record of each key.
// It returns the new checkpoint: the first offset not in the map. A
// *segment.CorruptError means the log cannot be cleaned; ErrRewriteStale
// that retention or truncation changed it meanwhile (try again later).
func Clean(l *segment.Log, p Plan, o Options) (int64, Stats, error) {
	var st Stats
	aborted := newAbortedRanges(l.AbortedTxns(l.StartOffset(), p.FirstUncleanable))
	end, err := buildMap(l, p, o, aborted, &st)
	if err != nil {
		return p.FirstDirty, st, err
	}
	if end == p.FirstDirty {
		return end, st, nil
	}
	f := &filter{m: o.Map, end: end, now: o.Now.UnixMilli(), retention: o.DeleteRetention.Milliseconds(),
		producers: o.Producers, ongoing: map[int64]bool{}, aborted: aborted, stats: &st}
	for _, g := range groupSegments(l.ClosedSegments(), end, o.SegmentBytes) {
		if err := cleanGroup(l, g, f, &o, &st); err != nil {
			return p.FirstDirty, st, err
		}
		if o.afterCommit != nil {
			o.afterCommit()
		}
	}
	return end, st, nil
}

// buildMap puts the keys of the dirty range into the map and returns the
// offset after the last batch it covers. Records of aborted transactions
// are left out.
func buildMap(l *segment.Log, p Plan, o Options, aborted abortedRanges, st *Stats) (int64, error) {
	m := o.Map
	m.Clear()
	end := p.FirstDirty
	var scratch []byte
	full := false
	for _, s := range l.ClosedSegments() {
		if s.Next <= p.FirstDirty || full {
			continue
		}
		if s.Base >= p.FirstUncleanable {
			break
		}
		err := l.ScanSegment(s.Base, func(raw []byte) error {
			b := kproto.Batch(raw)
			if b.LastOffset() < p.FirstDirty {
				return nil
			}
			if b.BaseOffset() >= p.FirstUncleanable || m.Full(int(b.NumRecords())) {
				full = true
				return errStop
			}
			st.BytesRead += int64(len(raw))
			o.Throttle.Wait(len(raw))
			if o.aborted() {
				return ErrAborted
			}
			if !b.Control() && !aborted.contains(b) {
				it, err := kproto.Records(b, scratch[:0])
				scratch = it.Scratch()
				if err != nil {
					return err
				}
				for r, ok := it.Next(); ok; r, ok = it.Next() {
					if off := b.BaseOffset() + int64(r.OffsetDelta); r.Key != nil && off >= p.FirstDirty {
						m.Put(r.Key, off)
					}
				}
				if err := it.Err(); err != nil {
					return err
				}
			}
			end = b.LastOffset() + 1
			return nil
		})
		if err != nil && err != errStop {
			return p.FirstDirty, corruptRecords(s.Base, err)
		}
		if !full {
			// The whole segment is in the map: the dirty part starts
			// after it, not after its last batch (a cleaned segment may
			// end in a gap), as Kafka's updateLatestOffset.
			end = max(end, min(s.Next, p.FirstUncleanable))
		}
	}
	if full && end == p.FirstDirty {
		return end, ErrBufferTooSmall
	}
	st.MapKeys = m.Len()
	return end, nil
}

// corruptRecords makes a records decoding error a CorruptError, so the
// caller marks the log uncleanable as for a bad batch.
func corruptRecords(base int64, err error) error {
	if errors.Is(err, ErrAborted) {
		return err
	}
	if errors.Is(err, kproto.ErrCorruptBatch) || errors.Is(err, kproto.ErrInvalidRecord) {
		return &segment.CorruptError{File: fmt.Sprintf("segment %d", base), Pos: -1, Offset: -1, Reason: err.Error()}
	}
	return err
}

// groupSegments groups the closed segments with a base below end into runs
// whose sizes add up to at most maxBytes and whose offsets span less than
// 2^31 (Kafka's groupSegmentsBySize).
func groupSegments(segs []segment.SegmentInfo, end, maxBytes int64) [][]segment.SegmentInfo {
	var groups [][]segment.SegmentInfo
	for i := 0; i < len(segs) && segs[i].Base < end; {
		j, size := i+1, segs[i].Size
		for j < len(segs) && segs[j].Base < end && size+segs[j].Size <= maxBytes &&
			segs[j].Next-1-segs[i].Base <= math.MaxInt32 {
			size += segs[j].Size
			j++
		}
		groups = append(groups, segs[i:j])
		i = j
	}
	return groups
}

// cleanGroup rewrites one group of segments into one.
func cleanGroup(l *segment.Log, g []segment.SegmentInfo, f *filter, o *Options, st *Stats) error {
	w, err := l.BeginRewrite(g[0].Base, g[len(g)-1].Next)
	if err != nil {
		return err
	}
	for _, s := range g {
		err := l.ScanSegment(s.Base, func(raw []byte) error {
			st.BytesRead += int64(len(raw))
			o.Throttle.Wait(len(raw))
			if o.aborted() {
				return ErrAborted
			}
			out, err := f.batch(kproto.Batch(raw))
			if err != nil || out == nil {
				return err
			}
			st.BytesWritten += int64(len(out))
			return w.Append(out)
		})
		if err != nil {
			w.Abort()
			return corruptRecords(s.Base, err)
		}
	}
	if err := w.Commit(); err != nil {
		return err
	}
	st.Segments += len(g)
	st.Groups++
	return nil
}
