package segment

import "math"

// AppendBatches appends buf, one or more complete record batches back to
// back (each as Append takes it; its count is lastOffsetDelta+1 and its
// maxTimestamp the header's), at the end of the log with ONE write: a raft
// Ready's entries cost one syscall, not one each. It stores each batch's
// base offset into its first 8 bytes and returns the first batch's. The
// batches go to one segment (a roll happens before them if they would not
// fit, as for one batch). It fails with ErrInvalidBatch, changing nothing,
// if any batch is malformed; otherwise as Append.
func (l *Log) AppendBatches(buf []byte) (int64, error) {
	var span, batches int64
	for rest := buf; len(rest) > 0; {
		if len(rest) < HeaderSize || batchSize(rest) < HeaderSize || batchSize(rest) > int64(len(rest)) {
			return -1, errInvalid("a batch runs past the buffer")
		}
		b := rest[:batchSize(rest)]
		count := batchLastOffsetDelta(b) + 1
		if err := validateAppend(b, count, batchMaxTimestamp(b)); err != nil {
			return -1, err
		}
		span += int64(count)
		batches++
		rest = rest[len(b):]
	}
	if span == 0 {
		return -1, errInvalid("no batch")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return -1, err
	}
	s := l.active()
	if l.shouldRollLocked(s, int64(len(buf)), span) {
		if err := l.rollLocked(); err != nil {
			return -1, err
		}
		s = l.active()
	}
	first := s.next.Load()
	if first+span-1-s.base > math.MaxInt32 {
		return -1, errInvalid("the batches reach too far above their segment")
	}
	next := first
	for rest := buf; len(rest) > 0; {
		b := rest[:batchSize(rest)]
		putBaseOffset(b, next)
		next += int64(batchLastOffsetDelta(b)) + 1
		rest = rest[len(b):]
	}
	pos := s.size.Load()
	if err := l.writeLocked(s, buf, pos); err != nil {
		return -1, err
	}
	next = first
	for rest := buf; len(rest) > 0; {
		b := rest[:batchSize(rest)]
		next += int64(batchLastOffsetDelta(b)) + 1
		s.indexBatch(pos+int64(len(buf)-len(rest)), next-1, batchMaxTimestamp(b), int64(len(b)), l.interval())
		rest = rest[len(b):]
	}
	s.size.Store(pos + int64(len(buf)))
	s.next.Store(next)
	l.mu.unflushed += batches
	if l.opts.FlushEntries > 0 && l.mu.unflushed >= l.opts.FlushEntries {
		return first, l.syncLocked()
	}
	if l.opts.FlushInterval > 0 && !l.mu.flushArmed {
		l.mu.flushArmed = true
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
	return first, nil
}
