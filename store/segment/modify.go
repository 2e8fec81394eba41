package segment

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// checkpointName is the file that keeps the log start offset that
// SetStartOffset set, as text: the offset and a newline.
const checkpointName = "log-start-offset"

// Roll closes the active segment and starts a new one at NextOffset. The
// old segment's indexes get their final time entry and the segment is
// fsynced before the new one is created, so that every segment but the last
// is durable. Rolling an empty segment does nothing. Append rolls by
// itself (SegmentBytes, SegmentAge); that fsync happens inside the Append
// that rolls (readers are not blocked; Kafka does it in the background),
// and Options.WritebackBytes keeps it short.
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	return l.rollLocked()
}

// rollLocked is Roll. l.mu must be held.
func (l *Log) rollLocked() error {
	old := l.active()
	if old.size.Load() == 0 {
		return nil
	}
	if err := l.trimLocked(old); err != nil {
		return err
	}
	old.ix.addTime(old.maxTs.Load(), old.offsetOfMaxTs)
	if err := l.syncAllLocked(); err != nil {
		return err
	}
	s, err := l.createSegment(old.next.Load())
	if err != nil {
		return err
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		s.release()
		s.remove(l.fs)
		return fmt.Errorf("segment: sync dir %s: %w", l.dir, err)
	}
	segs := l.list()
	l.publish(append(segs[:len(segs):len(segs)], s))
	return nil
}

// Truncate removes every batch that covers an offset >= offset: a batch
// that straddles offset is removed whole, and so are all later segments.
// It returns the new NextOffset (the base offset of the first removed
// batch, or NextOffset if offset is at or past it). If offset is at or
// below the first segment's base offset the log is emptied and restarts at
// offset. A StartOffset above the new end is lowered to it.
//
// Readers that hold a FileRange over removed bytes of the segment being
// cut may read data appended after the truncation; callers only truncate
// entries that no reader may see (Kafka: above the high watermark; raft:
// uncommitted).
func (l *Log) Truncate(offset int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return -1, err
	}
	if next := l.NextOffset(); offset >= next {
		return next, nil
	}
	segs := l.list()
	if offset <= segs[0].base {
		return offset, l.resetLocked(offset)
	}
	i := findSegment(segs, offset)
	if err := l.dropAfterLocked(i); err != nil {
		return -1, err
	}
	s := segs[i]
	var h [HeaderSize]byte
	limit := s.size.Load()
	pos, found, err := s.locate(&h, offset, limit)
	if err != nil {
		return -1, err
	}
	end := offset
	if found {
		end = BatchBaseOffset(h[:])
	}
	if err := l.cutLocked(s, pos, end, found); err != nil {
		return -1, err
	}
	if l.start.Load() > s.next.Load() {
		l.start.Store(s.next.Load())
		return s.next.Load(), l.persistStartLocked()
	}
	return s.next.Load(), nil
}

// findSegment returns the index of the segment holding off: the last one
// whose base is <= off (0 if off is below all).
func findSegment(segs []*segment, off int64) int {
	lo, hi := 0, len(segs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if segs[m].base <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return max(lo-1, 0)
}

// dropAfterLocked deletes the segments after index i, newest first, so a
// crash leaves a prefix. l.mu must be held.
func (l *Log) dropAfterLocked(i int) error {
	segs := l.list()
	if i == len(segs)-1 {
		return nil
	}
	l.publish(segs[: i+1 : i+1])
	var errs []error
	for j := len(segs) - 1; j > i; j-- {
		errs = append(errs, segs[j].remove(l.fs))
		segs[j].release()
	}
	errs = append(errs, l.fs.SyncDir(l.dir))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("segment: delete segments after %d: %w", segs[i].base, err)
	}
	return nil
}

// cutLocked truncates s, now the active segment, at byte pos. When found,
// the batch at pos (base offset end) was the first one removed; otherwise
// nothing of s is removed and its real end is rescanned. It recomputes
// next, maxTs and the indexes. l.mu must be held.
func (l *Log) cutLocked(s *segment, pos, end int64, found bool) error {
	if err := s.log.Truncate(pos); err != nil {
		return fmt.Errorf("segment: truncate %s to %d: %w", s.logPath, pos, err)
	}
	s.dirtyTail = false
	s.fileEnd = pos
	s.ix.truncate(pos, s.relative(end))
	err := errors.Join(
		s.offFile.Truncate(int64(s.ix.offWritten)*offsetEntrySize),
		s.timFile.Truncate(int64(s.ix.timWritten)*timeEntrySize))
	if err != nil {
		return fmt.Errorf("segment: truncate indexes of %s: %w", s.logPath, err)
	}
	if err := l.cutTxnIndexLocked(s, end); err != nil {
		return fmt.Errorf("segment: truncate %s: %w", s.txnPath, err)
	}
	return l.rescanTail(s, pos, end, found)
}

// rescanTail recomputes next, maxTs and the index state of s after a cut
// at pos, scanning from its last remaining offset index entry.
func (l *Log) rescanTail(s *segment, pos, end int64, found bool) error {
	from := int64(0)
	if e, ok := s.ix.lastOffset(); ok {
		from = int64(e.pos)
	}
	maxTs, ofMax, next := s.maxTsFloor()
	var h [HeaderSize]byte
	for p := from; p < pos; p += batchSize(h[:]) {
		if err := s.readHeader(&h, p, pos); err != nil {
			return err
		}
		last := BatchBaseOffset(h[:]) + int64(batchLastOffsetDelta(h[:]))
		if ts := batchMaxTimestamp(h[:]); ts > maxTs {
			maxTs, ofMax = ts, s.relative(last)
		}
		next = last + 1
	}
	if found {
		next = end
	}
	s.next.Store(next)
	s.size.Store(pos)
	s.maxTs.Store(maxTs)
	s.offsetOfMaxTs = ofMax
	s.bytesSinceIndex = pos - from
	return nil
}

// maxTsFloor returns the last time entry as a lower bound of the max
// timestamp, its relative offset, and the segment base as the lowest next.
func (s *segment) maxTsFloor() (int64, int32, int64) {
	if e, ok := s.ix.lastTime(); ok {
		return e.ts, e.rel, s.base
	}
	return minTimestamp, 0, s.base
}

// resetLocked empties the log and restarts it at offset (Kafka's
// truncateFullyAndStartAt). The new start offset is persisted first, so
// that a crash midway is finished by the next Open. l.mu must be held.
func (l *Log) resetLocked(offset int64) error {
	l.start.Store(offset)
	if err := l.persistStartLocked(); err != nil {
		return err
	}
	old := l.list()
	var errs []error
	for j := len(old) - 1; j >= 0; j-- {
		errs = append(errs, old[j].remove(l.fs))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("segment: delete segments of %s: %w", l.dir, err)
	}
	s, err := l.createSegment(offset)
	if err != nil {
		return err
	}
	l.publish([]*segment{s})
	for _, o := range old {
		o.release()
	}
	l.mu.unflushed = 0
	if err := l.fs.SyncDir(l.dir); err != nil {
		return fmt.Errorf("segment: sync dir %s: %w", l.dir, err)
	}
	return nil
}

// SetStartOffset advances the log start offset to off (Kafka
// DeleteRecords; raft log compaction), persisting it in the
// "log-start-offset" file before deleting the whole segments that lie
// below it; the active segment is never deleted this way. An off at or
// below StartOffset does nothing. An off above NextOffset empties the log
// and restarts it at off (a raft snapshot that is ahead of the log).
func (l *Log) SetStartOffset(off int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if off <= l.start.Load() {
		return nil
	}
	if off > l.NextOffset() {
		return l.resetLocked(off)
	}
	l.start.Store(off)
	if err := l.persistStartLocked(); err != nil {
		return err
	}
	segs := l.list()
	n := 0
	for n < len(segs)-1 && segs[n+1].base <= off {
		n++
	}
	return l.deleteOldestLocked(n)
}

// deleteOldestLocked deletes the first n segments, oldest first (a crash
// leaves a suffix). n is less than the number of segments. l.mu must be
// held.
func (l *Log) deleteOldestLocked(n int) error {
	if n == 0 {
		return nil
	}
	segs := l.list()
	// Raise the start first: a reader that sees the new list must not
	// accept an offset of a deleted segment.
	if first := segs[n].base; l.start.Load() < first {
		l.start.Store(first)
	}
	l.publish(segs[n:])
	var errs []error
	for _, s := range segs[:n] {
		errs = append(errs, s.remove(l.fs))
		s.release()
	}
	errs = append(errs, l.fs.SyncDir(l.dir))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("segment: delete old segments of %s: %w", l.dir, err)
	}
	return nil
}

// EnforceRetention deletes the oldest whole segments that RetentionAge or
// RetentionBytes allow to delete, and returns how many. If that includes
// the active segment, the log first rolls, so it keeps an empty active
// segment at NextOffset. StartOffset moves up to the first kept segment.
func (l *Log) EnforceRetention() (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return 0, err
	}
	segs := l.list()
	total := l.Size()
	cutoff := l.now().Add(-l.opts.RetentionAge)
	n := 0
	for _, s := range segs {
		size := s.size.Load()
		if size == 0 {
			break
		}
		byAge := l.opts.RetentionAge > 0 && l.newest(s).Before(cutoff)
		bySize := l.opts.RetentionBytes > 0 && total-size >= l.opts.RetentionBytes
		if !byAge && !bySize {
			break
		}
		total -= size
		n++
	}
	if n == len(segs) {
		if err := l.rollLocked(); err != nil {
			return 0, err
		}
	}
	return n, l.deleteOldestLocked(n)
}

// newest returns the time of the newest batch of s: its max timestamp in
// Unix milliseconds, or the file's modification time without one.
func (l *Log) newest(s *segment) time.Time {
	if ts := s.maxTs.Load(); ts >= 0 {
		return time.UnixMilli(ts)
	}
	if fi, err := s.log.Stat(); err == nil {
		return fi.ModTime()
	}
	return l.now()
}

// persistStartLocked writes the start offset to the checkpoint file
// (write a temporary file, fsync, rename, fsync the directory) unless the
// file already has it. l.mu must be held.
func (l *Log) persistStartLocked() error {
	off := l.start.Load()
	if off == l.mu.ckStart {
		return nil
	}
	path := filepath.Join(l.dir, checkpointName)
	tmp := path + ".tmp"
	f, err := l.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.FormatInt(off, 10)+"\n"), 0)
		err = errors.Join(err, f.Sync(), f.Close())
	}
	if err == nil {
		err = l.fs.Rename(tmp, path)
	}
	if err == nil {
		err = l.fs.SyncDir(l.dir)
	}
	if err != nil {
		return fmt.Errorf("segment: write %s: %w", path, err)
	}
	l.mu.ckStart = off
	return nil
}

// readCheckpoint returns the start offset in the checkpoint file, or -1 if
// there is none.
func (l *Log) readCheckpoint() (int64, error) {
	path := filepath.Join(l.dir, checkpointName)
	f, err := l.fs.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("segment: open %s: %w", path, err)
	}
	defer f.Close()
	var b [32]byte
	n, err := f.ReadAt(b[:], 0)
	if err != nil && err != io.EOF {
		return 0, fmt.Errorf("segment: read %s: %w", path, err)
	}
	off, err := strconv.ParseInt(strings.TrimSpace(string(b[:n])), 10, 64)
	if err != nil || off < 0 {
		return 0, fmt.Errorf("segment: %s: not an offset: %q", path, b[:n])
	}
	return off, nil
}
