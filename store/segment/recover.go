package segment

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"
)

// scanChunk is how much of a .log file recovery reads at once.
const scanChunk = 1 << 20

// batchScanner reads the batches of a file front to back through a window.
type batchScanner struct {
	f      File
	size   int64  // file size
	buf    []byte // window
	bufPos int64  // file position of buf[0]
}

// window returns the bytes [pos, pos+n) of the file; pos+n <= size.
func (sc *batchScanner) window(pos, n int64) ([]byte, error) {
	if pos >= sc.bufPos && pos+n <= sc.bufPos+int64(len(sc.buf)) {
		return sc.buf[pos-sc.bufPos : pos-sc.bufPos+n], nil
	}
	want := min(max(n, scanChunk), sc.size-pos)
	if int64(cap(sc.buf)) < want {
		sc.buf = make([]byte, want)
	}
	sc.buf = sc.buf[:want]
	sc.bufPos = pos
	if _, err := sc.f.ReadAt(sc.buf, pos); err != nil && err != io.EOF {
		sc.buf = sc.buf[:0]
		return nil, err
	}
	return sc.buf[:n], nil
}

// scanStop says where and why a scan stopped before the end of the file.
type scanStop struct {
	pos    int64
	offset int64 // the offset expected there
	reason string
}

// scanBatches verifies the batches of a file from position 0 as recovery
// does (sane length, magic 2, CRC-32C, offsets increasing from base and
// within int32 of it) and calls fn for each valid one. It returns the end
// of the valid prefix, and why it stopped there if that is before size.
func scanBatches(f File, size, base int64, fn func(pos int64, b []byte)) (int64, *scanStop, error) {
	sc := batchScanner{f: f, size: size}
	pos, next := int64(0), base
	for pos < size {
		stop := func(why string) (int64, *scanStop, error) { return pos, &scanStop{pos, next, why}, nil }
		if size-pos < HeaderSize {
			return stop("torn batch header")
		}
		h, err := sc.window(pos, HeaderSize)
		if err != nil {
			return pos, nil, err
		}
		if why := checkHeader(h); why != "" {
			return stop(why)
		}
		n := batchSize(h)
		if pos+n > size {
			return stop("batch extends past the end of the file")
		}
		bo, last := BatchBaseOffset(h), BatchBaseOffset(h)+int64(batchLastOffsetDelta(h))
		if bo < next || last < bo || last-base > math.MaxInt32 {
			return stop("batch offsets out of order")
		}
		b, err := sc.window(pos, n)
		if err != nil {
			return pos, nil, err
		}
		if !checkCRC(b) {
			return stop("CRC-32C mismatch")
		}
		fn(pos, b)
		pos, next = pos+n, last+1
	}
	return pos, nil, nil
}

// parseSegmentName returns the base offset of a file named
// 00000000000000000000.log, or false.
func parseSegmentName(name string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, ".log")
	if !ok || len(digits) != 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	return v, err == nil && v >= 0
}

// listBases returns the base offsets of the .log files in dir, sorted.
func (l *Log) listBases() ([]int64, error) {
	ents, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("segment: list %s: %w", l.dir, err)
	}
	var bases []int64
	for _, e := range ents {
		if b, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			bases = append(bases, b)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases, nil
}

// loadSegments opens every segment: the last one is recovered (verified
// batch by batch, truncated at the first bad one, indexes rebuilt); the
// others, fsynced when rolled, only have their indexes checked.
func (l *Log) loadSegments(defaultBase int64) ([]*segment, error) {
	bases, err := l.listBases()
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		s, err := l.createSegment(defaultBase)
		if err != nil {
			return nil, err
		}
		return []*segment{s}, nil
	}
	segs := make([]*segment, 0, len(bases))
	fail := func(err error) ([]*segment, error) {
		for _, s := range segs {
			s.release()
		}
		return nil, err
	}
	for i, base := range bases {
		s, err := openSegmentFiles(l.fs, l.dir, base, false)
		if err != nil {
			return fail(fmt.Errorf("segment: open %d: %w", base, err))
		}
		segs = append(segs, s)
		if i == len(bases)-1 {
			err = l.recoverActive(s)
		} else {
			err = l.loadClosed(s, bases[i+1])
		}
		if err == nil {
			err = l.loadTxnIndex(s)
		}
		if err != nil {
			return fail(err)
		}
	}
	return segs, nil
}

func fileSize(f File, path string) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("segment: stat %s: %w", path, err)
	}
	return fi.Size(), nil
}

// rebuild scans s from the start, re-creating its in-memory indexes, and
// returns the scan result.
func (l *Log) rebuild(s *segment, size int64) (int64, *scanStop, error) {
	s.ix = indexes{}
	s.maxTs.Store(minTimestamp)
	s.bytesSinceIndex, s.offsetOfMaxTs = 0, 0
	next := s.base
	end, stop, err := scanBatches(s.log, size, s.base, func(pos int64, b []byte) {
		last := BatchBaseOffset(b) + int64(batchLastOffsetDelta(b))
		s.indexBatch(pos, last, batchMaxTimestamp(b), int64(len(b)), int64(l.opts.IndexIntervalBytes))
		next = last + 1
	})
	if err != nil {
		return 0, nil, fmt.Errorf("segment: read %s: %w", s.logPath, err)
	}
	s.size.Store(end)
	s.next.Store(next)
	return end, stop, nil
}

// recoverActive verifies the last segment and truncates it after its last
// valid batch; torn writes of a crash end up there, and so do the zeros of
// preallocation (Options.PreallocateBytes), which end the data silently.
func (l *Log) recoverActive(s *segment) error {
	size, err := fileSize(s.log, s.logPath)
	if err != nil {
		return err
	}
	end, stop, err := l.rebuild(s, size)
	if err != nil {
		return err
	}
	if stop != nil {
		zero, err := zeroTail(s.log, end, size)
		if err != nil {
			return fmt.Errorf("segment: read %s: %w", s.logPath, err)
		}
		if !zero {
			l.logger.Warn("segment: truncating the active segment after its last valid batch",
				slog.String("file", s.logPath), slog.Int64("position", stop.pos),
				slog.Int64("offset", stop.offset), slog.String("reason", stop.reason),
				slog.Int64("dropped_bytes", size-end))
		}
		if err := s.log.Truncate(end); err != nil {
			return fmt.Errorf("segment: truncate %s to %d: %w", s.logPath, end, err)
		}
		if err := s.log.Sync(); err != nil {
			return fmt.Errorf("segment: sync %s: %w", s.logPath, err)
		}
	}
	s.fileEnd = end
	s.created = l.opts.Now()
	return l.rewriteIndexes(s)
}

// zeroTail reports whether the bytes [from, size) of f are all zero.
func zeroTail(f File, from, size int64) (bool, error) {
	buf := make([]byte, min(size-from, scanChunk))
	for p := from; p < size; {
		b := buf[:min(int64(len(buf)), size-p)]
		n, err := f.ReadAt(b, p)
		if err != nil && err != io.EOF {
			return false, err
		}
		for _, c := range b[:n] {
			if c != 0 {
				return false, nil
			}
		}
		if n == 0 {
			return true, nil // the file is shorter than size: nothing more
		}
		p += int64(n)
	}
	return true, nil
}

// rewriteIndexes replaces both index files with the in-memory indexes.
func (l *Log) rewriteIndexes(s *segment) error {
	s.ix.offWritten, s.ix.timWritten = 0, 0
	err := errors.Join(s.offFile.Truncate(0), s.timFile.Truncate(0))
	if err == nil {
		l.mu.offBuf, l.mu.timBuf, err = s.writeIndexes(l.mu.offBuf, l.mu.timBuf)
	}
	if err == nil {
		err = errors.Join(s.offFile.Sync(), s.timFile.Sync())
	}
	if err != nil {
		return fmt.Errorf("segment: rewrite indexes of %s: %w", s.logPath, err)
	}
	return nil
}

// loadClosed loads the indexes of a segment that is not the last, checking
// them against the log; if they are missing or inconsistent they are
// rebuilt, and then a bad batch is an error (it cannot be a torn write).
// With preallocation on, zeros after the last batch (a segment that was
// preallocated but not cut back, which Roll does before the next segment
// exists) are the end of its data and are cut off.
func (l *Log) loadClosed(s *segment, nextBase int64) error {
	size, err := fileSize(s.log, s.logPath)
	if err != nil {
		return err
	}
	s.size.Store(size)
	s.fileEnd = size
	s.next.Store(nextBase)
	fi, err := s.log.Stat()
	if err == nil {
		s.created = fi.ModTime()
	}
	if why := l.loadIndexes(s, size, nextBase); why == "" {
		if l.opts.PreallocateBytes > 0 {
			return l.trimClosed(s, size)
		}
		return nil
	} else {
		l.logger.Warn("segment: rebuilding indexes", slog.String("file", s.logPath), slog.String("reason", why))
	}
	end, stop, err := l.rebuild(s, size)
	if err != nil {
		return err
	}
	padded := false
	if end != size && l.opts.PreallocateBytes > 0 {
		if padded, err = zeroTail(s.log, end, size); err != nil {
			return fmt.Errorf("segment: read %s: %w", s.logPath, err)
		}
	}
	if stop != nil && !padded {
		return &CorruptError{File: s.logPath, Pos: stop.pos, Offset: stop.offset, Reason: stop.reason}
	}
	if end != size && !padded {
		return &CorruptError{File: s.logPath, Pos: end, Offset: s.next.Load(), Reason: "trailing bytes"}
	}
	if padded {
		if err := l.cutPadding(s, end, size); err != nil {
			return err
		}
	}
	s.ix.addTime(s.maxTs.Load(), s.offsetOfMaxTs)
	return l.rewriteIndexes(s)
}

// trimClosed finds the end of the batches of a closed segment whose
// indexes checked out, walking the batch headers from its last offset
// index entry, and cuts off zeros after it. Anything else that is not a
// batch is left for readers to report, as without preallocation.
func (l *Log) trimClosed(s *segment, size int64) error {
	p := int64(0)
	if e, ok := s.ix.lastOffset(); ok {
		p = int64(e.pos)
	}
	var h [HeaderSize]byte
	for p < size {
		n := min(int64(HeaderSize), size-p)
		if _, err := s.log.ReadAt(h[:n], p); err != nil && err != io.EOF {
			return fmt.Errorf("segment: read %s at %d: %w", s.logPath, p, err)
		}
		if n == HeaderSize && checkHeader(h[:]) == "" {
			p += batchSize(h[:])
			continue
		}
		zero, err := zeroTail(s.log, p, size)
		if err != nil {
			return fmt.Errorf("segment: read %s: %w", s.logPath, err)
		}
		if zero {
			return l.cutPadding(s, p, size)
		}
		return nil
	}
	return nil
}

// cutPadding truncates the preallocated zeros [end, size) off a closed
// segment and makes that durable.
func (l *Log) cutPadding(s *segment, end, size int64) error {
	l.logger.Info("segment: cutting preallocated zeros off a closed segment",
		slog.String("file", s.logPath), slog.Int64("end", end), slog.Int64("file_size", size))
	if err := s.log.Truncate(end); err != nil {
		return fmt.Errorf("segment: truncate %s to %d: %w", s.logPath, end, err)
	}
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("segment: sync %s: %w", s.logPath, err)
	}
	s.size.Store(end)
	s.fileEnd = end
	return nil
}

// loadIndexes reads and checks both index files of a closed segment,
// returning why they are unusable, or "".
func (l *Log) loadIndexes(s *segment, size, nextBase int64) string {
	ob, why := readAll(s.offFile)
	if why != "" {
		return why
	}
	tb, why := readAll(s.timFile)
	if why != "" {
		return why
	}
	off, ok := decodeOffsetIndex(ob, size)
	if !ok || (len(off) == 0 && size > int64(l.opts.IndexIntervalBytes)) {
		// An empty index of a segment past one interval may be a lost
		// file; if it is right, the rescan is one or two batches.
		return "offset index malformed or empty"
	}
	maxRel := int32(min(nextBase-1-s.base, math.MaxInt32))
	tim, ok := decodeTimeIndex(tb, maxRel)
	if !ok || (len(tim) == 0 && size > 0) {
		return "time index malformed or empty"
	}
	if n := len(off); n > 0 {
		var h [HeaderSize]byte
		e := off[n-1]
		if s.readHeader(&h, int64(e.pos), size) != nil ||
			BatchBaseOffset(h[:])+int64(batchLastOffsetDelta(h[:])) != s.base+int64(e.rel) {
			return "last offset index entry does not match the log"
		}
	}
	s.ix = indexes{off: off, tim: tim, offWritten: len(off), timWritten: len(tim)}
	if n := len(tim); n > 0 {
		s.maxTs.Store(tim[n-1].ts)
		s.offsetOfMaxTs = tim[n-1].rel
	}
	return ""
}

// readAll reads a whole index file, or says why it cannot.
func readAll(f File) ([]byte, string) {
	fi, err := f.Stat()
	if err != nil {
		return nil, "stat: " + err.Error()
	}
	if fi.Size() > math.MaxInt32 {
		return nil, "index too large"
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, "read: " + err.Error()
	}
	return b, ""
}
