package segment

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Log. The zero value is Kafka's defaults: 1 GiB
// segments, an index entry every 4096 bytes, no fsync policy, no retention.
type Options struct {
	// SegmentBytes: roll when appending would make the active segment
	// larger (Kafka segment.bytes). Default 1 GiB; at most 2 GiB-1, because
	// index positions are int32. A batch larger than this still goes into
	// an empty segment of its own.
	SegmentBytes int64
	// SegmentAge: roll when the active segment is older (segment.ms),
	// measured from when it was created or, after a restart, reopened.
	// 0 = never.
	SegmentAge time.Duration
	// IndexIntervalBytes: bytes of log between offset index entries
	// (index.interval.bytes). Default 4096.
	IndexIntervalBytes int
	// FlushEntries: fsync after this many appended batches
	// (flush.messages), inside the Append that reaches it. 0 = not by count.
	FlushEntries int64
	// FlushInterval: fsync at most this long after an append (flush.ms),
	// from a goroutine that Close stops. 0 = not by time.
	FlushInterval time.Duration
	// RetentionAge: EnforceRetention deletes the oldest whole segments
	// whose newest batch (maxTimestamp, in Unix milliseconds; the file's
	// modification time if it has none) is older (retention.ms). 0 = keep.
	RetentionAge time.Duration
	// RetentionBytes: EnforceRetention deletes the oldest whole segments
	// while the log would stay at least this large without them
	// (retention.bytes). 0 = keep.
	RetentionBytes int64
	// PreallocateBytes: keep the active segment's file extended this far
	// ahead of the end of its data, in chunks of this size (capped at
	// SegmentBytes unless one batch is larger), with fallocate(2) mode 0
	// where the file system has it and written zeros elsewhere. An fsync
	// then rarely has to commit a size change too: on ext4 this cuts
	// fdatasync latency by about a quarter. The zeros are cut off again on
	// Roll, Close and Truncate; recovery takes a zero-filled tail for the
	// end of the data (in the active segment and, with this option on, in
	// the others). 0 = off (the default): files are exactly Kafka's.
	PreallocateBytes int64
	// WritebackBytes: every this many bytes appended to the active
	// segment, start writing them to the disk (sync_file_range(2)
	// SYNC_FILE_RANGE_WRITE on Linux: asynchronous, nothing waits for it),
	// from a goroutine of its own, so that the fsync of a Roll or Sync
	// finds little left to write. Without it the kernel leaves gigabytes
	// dirty, and the Append that rolls a 1 GiB segment waits for its whole
	// writeback (0.4 s on an SSD). Durability is unchanged: only the
	// fsyncs promise anything. 0 = off (the default).
	WritebackBytes int64
	// FS is the file system; nil means the operating system's.
	FS FS
	// Logger receives recovery warnings; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o *Options) setDefaults() {
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 1 << 30
	}
	o.SegmentBytes = min(o.SegmentBytes, math.MaxInt32)
	if o.IndexIntervalBytes <= 0 {
		o.IndexIntervalBytes = 4096
	}
	o.PreallocateBytes = max(o.PreallocateBytes, 0)
	if o.FS == nil {
		o.FS = osFS{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Log is an append-only log of record batches in segment files.
//
// One goroutine at a time may modify it (Append, Truncate, Roll,
// SetStartOffset, EnforceRetention, Sync, Close serialize on a mutex);
// any number of goroutines may read it concurrently (Read, ReadBatches,
// OffsetForTime, NextOffset, StartOffset, Size) without taking that mutex.
type Log struct {
	dir    string
	opts   Options
	fs     FS
	logger *slog.Logger

	// segs is the current segment list, sorted by base offset, never
	// empty; the last one is the active segment. Invariant: a published
	// list is never modified; the appender publishes a new one.
	segs atomic.Pointer[[]*segment]
	// start is the log start offset. Invariant: segs[0].base <= start <=
	// NextOffset.
	start  atomic.Int64
	closed atomic.Bool

	// syncMu serializes Sync calls so that the fsync runs without mu.
	// Lock order: syncMu, then mu, then a segment's indexes.mu. Readers
	// take only indexes.mu (briefly); no lock is held across an fsync that
	// a reader could wait for.
	syncMu sync.Mutex

	mu struct {
		sync.Mutex
		unflushed  int64 // batches appended since the last fsync
		flushArmed bool  // the flusher goroutine has been kicked
		syncErr    error // sticky: an fsync failed, data may be lost
		ckStart    int64 // start offset in the checkpoint file (-1: none)
		offBuf     []byte
		timBuf     []byte
	}

	kick chan struct{} // wakes the flusher after an append
	// writingBack is set while a writeback goroutine runs (at most one;
	// see WritebackBytes and startWritebackLocked).
	writingBack atomic.Bool
	done        chan struct{} // closed by Close
	wg          sync.WaitGroup
}

// Open opens the log in dir, creating dir if needed. It recovers the
// active (last) segment: every batch is verified (sane length, magic 2,
// CRC-32C), the first bad one and everything after it is truncated, and
// its indexes are rebuilt. The indexes of the other segments are checked
// against the log and rebuilt if missing or inconsistent; a bad batch found
// there is a *CorruptError.
func Open(dir string, opts Options) (*Log, error) {
	opts.setDefaults()
	l := &Log{dir: dir, opts: opts, fs: opts.FS, logger: opts.Logger,
		kick: make(chan struct{}, 1), done: make(chan struct{})}
	if err := l.fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("segment: create %s: %w", dir, err)
	}
	if err := l.recoverSwaps(); err != nil {
		return nil, err
	}
	ck, err := l.readCheckpoint()
	if err != nil {
		return nil, err
	}
	l.mu.ckStart = ck
	segs, err := l.loadSegments(max(ck, 0))
	if err != nil {
		return nil, err
	}
	l.segs.Store(&segs)
	l.start.Store(max(ck, segs[0].base))
	if start := l.start.Load(); start > l.NextOffset() {
		l.mu.Lock()
		err = l.resetLocked(start)
		l.mu.Unlock()
		if err != nil {
			l.Close()
			return nil, err
		}
	}
	if opts.FlushInterval > 0 {
		l.wg.Go(l.flusher)
	}
	return l, nil
}

func (l *Log) list() []*segment     { return *l.segs.Load() }
func (l *Log) active() *segment     { s := l.list(); return s[len(s)-1] }
func (l *Log) publish(s []*segment) { l.segs.Store(&s) }
func (l *Log) now() time.Time       { return l.opts.Now() }
func (l *Log) interval() int64      { return int64(l.opts.IndexIntervalBytes) }
func (l *Log) createSegment(base int64) (*segment, error) {
	s, err := openSegmentFiles(l.fs, l.dir, base, true)
	if err != nil {
		return nil, fmt.Errorf("segment: create segment %d in %s: %w", base, l.dir, err)
	}
	// A .txnindex left at this base by an earlier segment is not this one's.
	if err := l.fs.Remove(s.txnPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.release()
		return nil, fmt.Errorf("segment: create segment %d in %s: %w", base, l.dir, err)
	}
	s.created = l.now()
	return s, nil
}

// NextOffset returns the log end offset: the offset the next appended
// batch will get.
func (l *Log) NextOffset() int64 { return l.active().next.Load() }

// StartOffset returns the log start offset: the first offset that reads
// may ask for.
func (l *Log) StartOffset() int64 { return l.start.Load() }

// Size returns the total size in bytes of the batches in the segments'
// .log files (not counting preallocated space).
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.list() {
		n += s.size.Load()
	}
	return n
}

// Append writes batch, a complete record batch v2 covering count offsets
// whose header maxTimestamp is maxTimestamp, at the end of the log. It
// stores the assigned base offset (the old NextOffset) into batch[0:8],
// which the CRC does not cover, and returns it. It fails with
// ErrInvalidBatch, changing nothing, unless len(batch) is batchLength+12,
// magic is 2 and count is lastOffsetDelta+1.
//
// The bytes go to the file with one write; the batch is visible to readers
// when Append returns, durable after the next Sync (or flush policy). If
// the write fails (a full disk) the partial bytes are truncated away and
// the error returned; the log stays as it was and a later Append may
// succeed. After a failed fsync every Append and Sync fails with that
// error: reopen the log to recover what reached the disk.
func (l *Log) Append(batch []byte, count int32, maxTimestamp int64) (int64, error) {
	return l.append(batch, count, maxTimestamp, -1)
}

// append is Append, or AppendAt when at >= 0.
func (l *Log) append(batch []byte, count int32, maxTimestamp, at int64) (int64, error) {
	if err := validateAppend(batch, count, maxTimestamp); err != nil {
		return -1, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return -1, err
	}
	s := l.active()
	if at >= 0 && at < s.next.Load() {
		return -1, errInvalid(fmt.Sprintf("base offset %d below the log end %d", at, s.next.Load()))
	}
	span := int64(count)
	if at >= 0 {
		span = at + int64(count) - s.next.Load()
	}
	if l.shouldRollLocked(s, int64(len(batch)), span) {
		if err := l.rollLocked(); err != nil {
			return -1, err
		}
		s = l.active()
	}
	base := s.next.Load()
	if at >= 0 {
		base = at
		if base+int64(count)-1-s.base > math.MaxInt32 {
			return -1, errInvalid(fmt.Sprintf("base offset %d too far above segment %d", at, s.base))
		}
	}
	putBaseOffset(batch, base)
	pos := s.size.Load()
	if err := l.writeLocked(s, batch, pos); err != nil {
		return -1, err
	}
	s.indexBatch(pos, base+int64(count)-1, maxTimestamp, int64(len(batch)), l.interval())
	s.size.Store(pos + int64(len(batch)))
	s.next.Store(base + int64(count))
	l.mu.unflushed++
	if l.opts.FlushEntries > 0 && l.mu.unflushed >= l.opts.FlushEntries {
		return base, l.syncLocked()
	}
	if l.opts.FlushInterval > 0 && !l.mu.flushArmed {
		l.mu.flushArmed = true
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
	return base, nil
}

func putBaseOffset(batch []byte, base int64) {
	u := uint64(base)
	_ = batch[7]
	batch[0], batch[1], batch[2], batch[3] = byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32)
	batch[4], batch[5], batch[6], batch[7] = byte(u>>24), byte(u>>16), byte(u>>8), byte(u)
}

// writableLocked reports whether the log accepts changes. l.mu must be held.
func (l *Log) writableLocked() error {
	if l.closed.Load() {
		return ErrClosed
	}
	return l.mu.syncErr
}

// shouldRollLocked reports whether a batch of n bytes covering count
// offsets must go to a new segment. l.mu must be held.
func (l *Log) shouldRollLocked(s *segment, n int64, count int64) bool {
	size := s.size.Load()
	if size == 0 {
		return false
	}
	return size+n > l.opts.SegmentBytes ||
		s.next.Load()+count-1-s.base > math.MaxInt32 ||
		(l.opts.SegmentAge > 0 && l.now().Sub(s.created) > l.opts.SegmentAge)
}

// writeLocked writes batch at pos of s, cutting off whatever a failed
// write left behind. l.mu must be held.
func (l *Log) writeLocked(s *segment, batch []byte, pos int64) error {
	if s.dirtyTail {
		if err := s.log.Truncate(pos); err != nil {
			return fmt.Errorf("segment: truncate %s to %d after a failed write: %w", s.logPath, pos, err)
		}
		s.dirtyTail = false
		s.fileEnd = pos
	}
	l.preallocLocked(s, pos, pos+int64(len(batch)))
	n, err := s.log.WriteAt(batch, pos)
	if err == nil && n != len(batch) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(batch))
	}
	if err == nil {
		l.startWritebackLocked(s, pos, pos+int64(len(batch)))
		return nil
	}
	s.dirtyTail = true
	if terr := s.log.Truncate(pos); terr == nil {
		s.dirtyTail = false
		s.fileEnd = pos
	}
	return fmt.Errorf("segment: write %s at %d: %w", s.logPath, pos, err)
}

// writebacker is implemented by Files that can start writing a range of
// their data to the disk without waiting (sync_file_range(2) on Linux).
type writebacker interface {
	StartWriteback(off, n int64) error
}

// writebackPage is the unit startWritebackLocked rounds down to: the page
// the next append writes into is left alone, since a write into a page
// under writeback may have to wait for it (stable pages).
const writebackPage = 4096

// startWritebackLocked starts the writeback of the data of s below end
// not yet started, once that is WritebackBytes, from a goroutine (the
// call can wait for the device queue); an append while one runs leaves
// the range to grow. Errors are the fsync's to report. pos is where this
// write began: a truncation may have moved the end below what was
// started. l.mu must be held.
func (l *Log) startWritebackLocked(s *segment, pos, end int64) {
	chunk := l.opts.WritebackBytes
	if chunk <= 0 {
		return
	}
	if s.wbFrom > pos {
		s.wbFrom = pos &^ (writebackPage - 1)
	}
	to := end &^ (writebackPage - 1)
	if to-s.wbFrom < chunk || l.writingBack.Load() {
		return
	}
	wb, ok := s.log.(writebacker)
	if !ok || !s.acquire() {
		return
	}
	from := s.wbFrom
	s.wbFrom = to
	l.writingBack.Store(true)
	l.wg.Add(1) // under l.mu and before Close, so Close waits for it
	go func() {
		defer l.wg.Done()
		wb.StartWriteback(from, to-from)
		s.release()
		l.writingBack.Store(false)
	}()
}

// preallocLocked extends the file of s, whose data ends at pos, so that it
// reaches at least want, by a multiple of PreallocateBytes (see Options).
// A failure is not the append's: the file is cut back to pos and the batch
// written as without preallocation. l.mu must be held.
func (l *Log) preallocLocked(s *segment, pos, want int64) {
	chunk := l.opts.PreallocateBytes
	if chunk <= 0 || want <= s.fileEnd {
		return
	}
	target := min((want+chunk-1)/chunk*chunk, max(l.opts.SegmentBytes, want))
	err := extendFile(s.log, s.fileEnd, target)
	if err == nil {
		s.fileEnd = target
		return
	}
	l.logger.Warn("segment: preallocation failed", slog.String("file", s.logPath), slog.Any("err", err))
	if terr := s.log.Truncate(pos); terr != nil {
		s.dirtyTail = true // the write truncates again first
		return
	}
	s.fileEnd = pos
}

// trimLocked cuts the preallocated zeros off the file of s (before it is
// closed or rolled). l.mu must be held.
func (l *Log) trimLocked(s *segment) error {
	size := s.size.Load()
	if s.fileEnd <= size {
		return nil
	}
	if err := s.log.Truncate(size); err != nil {
		return fmt.Errorf("segment: truncate %s to %d: %w", s.logPath, size, err)
	}
	s.fileEnd = size
	return nil
}

// Sync makes every batch appended so far durable: it fsyncs (fdatasync
// on Linux) the active segment's .log file. The other segments were
// fsynced with their indexes when rolled; the active segment's indexes are
// written and fsynced at Roll and Close only, since Open rebuilds them from
// the log anyway. The fsync runs without the append mutex, so appends and
// reads proceed meanwhile. A failed fsync is sticky: Append and Sync
// return it from then on, and the log must be reopened.
func (l *Log) Sync() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return err
	}
	s := l.active()
	n := l.mu.unflushed
	l.mu.flushArmed = false
	s.acquire() // s is in the list, so its files are open
	l.mu.Unlock()
	err := s.log.Sync()
	s.release()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		return l.failSyncLocked(s, err)
	}
	l.mu.unflushed = max(l.mu.unflushed-n, 0)
	return nil
}

// syncLocked is Sync for the appender, holding l.mu throughout.
func (l *Log) syncLocked() error {
	s := l.active()
	if err := s.log.Sync(); err != nil {
		return l.failSyncLocked(s, err)
	}
	l.mu.unflushed = 0
	return nil
}

// syncAllLocked writes the active segment's index entries and fsyncs it
// with its indexes: before a roll and at Close. l.mu must be held.
func (l *Log) syncAllLocked() error {
	s := l.active()
	err := l.writeIndexesLocked(s)
	if err == nil {
		err = s.syncAll(l.fs)
	}
	if err != nil {
		return l.failSyncLocked(s, err)
	}
	l.mu.unflushed = 0
	return nil
}

func (l *Log) failSyncLocked(s *segment, err error) error {
	if l.mu.syncErr == nil {
		l.mu.syncErr = fmt.Errorf("segment: fsync %s: %w", s.logPath, err)
	}
	return l.mu.syncErr
}

func (l *Log) writeIndexesLocked(s *segment) error {
	var err error
	l.mu.offBuf, l.mu.timBuf, err = s.writeIndexes(l.mu.offBuf, l.mu.timBuf)
	return err
}

// flusher fsyncs FlushInterval after an append kicks it.
func (l *Log) flusher() {
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-l.kick:
		}
		t.Reset(l.opts.FlushInterval)
		select {
		case <-l.done:
			t.Stop()
			return
		case <-t.C:
		}
		if err := l.Sync(); err != nil && !errors.Is(err, ErrClosed) {
			l.logger.Error("segment: periodic fsync failed", slog.String("dir", l.dir), slog.Any("err", err))
		}
	}
}

// Close writes the indexes, fsyncs the active segment, stops the flusher
// and releases the log's references to the files. Files that readers
// still hold through a FileRange stay open until released. Close returns
// the fsync error (or the sticky one of an earlier failed fsync), if any;
// later calls return nil.
func (l *Log) Close() error { return l.close(true) }

// close is Close, or with clean false Abandon (abandon.go).
func (l *Log) close(clean bool) error {
	l.mu.Lock()
	if l.closed.Load() {
		l.mu.Unlock()
		return nil
	}
	err := l.mu.syncErr
	if err == nil && clean {
		err = l.trimLocked(l.active())
	}
	if err == nil && clean {
		err = l.syncAllLocked()
	}
	l.closed.Store(true)
	for _, s := range l.list() {
		s.release()
	}
	l.mu.Unlock()
	close(l.done)
	l.wg.Wait()
	return err
}
