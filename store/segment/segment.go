package segment

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// segment is one .log file with its two indexes.
//
// Readers find segments through Log.segs and must acquire a reference
// before touching the files; the files are closed when the last reference
// is released, so a FileRange stays valid after the segment is deleted.
type segment struct {
	base                     int64 // offset of the first batch; the file name
	logPath, offPath, tiPath string
	// txnPath is the aborted-transaction index (txnindex.go), a file that
	// exists only once an entry was written; aborted its entries.
	txnPath               string
	aborted               atomic.Pointer[[]AbortedTxn]
	log, offFile, timFile File
	osFile                *os.File // log's OS file for sendfile, or nil

	// size is the committed size of the .log file.
	// Invariant: [0,size) holds only whole, valid batches; it is stored
	// after the bytes are written, so readers never see a partial batch.
	size atomic.Int64
	// next is the offset after the last batch. Invariant: stored after
	// size, so a reader that loads next and then size sees every batch
	// below next. For a segment other than the last it is an upper bound.
	next atomic.Int64
	// maxTs is the largest batch maxTimestamp, math.MinInt64 if empty.
	maxTs atomic.Int64
	// refs counts the Log's reference (while the segment is in the list)
	// plus one per reader. Invariant: files are closed iff refs reached 0.
	refs atomic.Int64

	ix indexes

	// Owned by the appender (Log.mu).
	offsetOfMaxTs   int32     // relative offset of the batch with maxTs
	bytesSinceIndex int64     // bytes appended since the last index entry
	created         time.Time // for SegmentAge
	dirtyTail       bool      // a failed write may have left bytes past size
	txnDirty        bool      // .txnindex entries written since its last fsync
	wbFrom          int64     // data below it has had its writeback started (WritebackBytes)
	// fileEnd is the size of the .log file when it is the active segment:
	// size plus the preallocated zeros (Options.PreallocateBytes).
	fileEnd int64
}

func segmentName(base int64, ext string) string { return fmt.Sprintf("%020d%s", base, ext) }

// openSegmentFiles opens (creating if needed) the three files of segment
// base; truncate empties them.
func openSegmentFiles(fsys FS, dir string, base int64, truncate bool) (*segment, error) {
	s := &segment{
		base:    base,
		logPath: filepath.Join(dir, segmentName(base, ".log")),
		offPath: filepath.Join(dir, segmentName(base, ".index")),
		tiPath:  filepath.Join(dir, segmentName(base, ".timeindex")),
		txnPath: filepath.Join(dir, segmentName(base, txnIndexExt)),
	}
	flag := os.O_RDWR | os.O_CREATE
	if truncate {
		flag |= os.O_TRUNC
	}
	var err error
	if s.log, err = fsys.OpenFile(s.logPath, flag, 0o644); err != nil {
		return nil, err
	}
	if s.offFile, err = fsys.OpenFile(s.offPath, flag, 0o644); err != nil {
		s.log.Close()
		return nil, err
	}
	if s.timFile, err = fsys.OpenFile(s.tiPath, flag, 0o644); err != nil {
		s.log.Close()
		s.offFile.Close()
		return nil, err
	}
	s.osFile = osFileOf(s.log)
	s.refs.Store(1)
	s.next.Store(base)
	s.maxTs.Store(minTimestamp)
	return s, nil
}

// acquire takes a reader's reference; false if the files are closed.
func (s *segment) acquire() bool {
	for {
		r := s.refs.Load()
		if r <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(r, r+1) {
			return true
		}
	}
}

// release drops a reference and closes the files with the last one.
func (s *segment) release() {
	if s.refs.Add(-1) == 0 {
		s.log.Close()
		s.offFile.Close()
		s.timFile.Close()
	}
}

// remove unlinks the segment's files (open descriptors stay valid).
func (s *segment) remove(fsys FS) error {
	var errs []error
	for _, p := range []string{s.logPath, s.offPath, s.tiPath, s.txnPath} {
		if err := fsys.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// relative converts an offset of this segment to an index offset.
func (s *segment) relative(off int64) int32 {
	r := off - s.base
	if r > math.MaxInt32 {
		return math.MaxInt32
	}
	if r < 0 {
		return 0
	}
	return int32(r)
}

// indexBatch updates the in-memory indexes for a batch appended at pos,
// exactly as Kafka's LogSegment.append does: the max timestamp so far is
// updated first, then an index entry is added (at the batch's last offset)
// once more than interval bytes were appended since the previous one.
func (s *segment) indexBatch(pos, lastOffset, maxTs, size, interval int64) {
	rel := s.relative(lastOffset)
	if maxTs > s.maxTs.Load() {
		s.maxTs.Store(maxTs)
		s.offsetOfMaxTs = rel
	}
	if s.bytesSinceIndex > interval {
		s.ix.addOffset(rel, int32(pos))
		s.ix.addTime(s.maxTs.Load(), s.offsetOfMaxTs)
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += size
}

// writeIndexes writes the index entries not yet in the files, using the
// scratch buffers (returned grown for reuse). It does not sync.
func (s *segment) writeIndexes(offBuf, timBuf []byte) ([]byte, []byte, error) {
	ob, oat, tb, tat := s.ix.pending(offBuf[:0], timBuf[:0])
	if len(ob) > 0 {
		if _, err := s.offFile.WriteAt(ob, oat); err != nil {
			return ob, tb, err
		}
	}
	if len(tb) > 0 {
		if _, err := s.timFile.WriteAt(tb, tat); err != nil {
			return ob, tb, err
		}
	}
	s.ix.markWritten()
	return ob, tb, nil
}

// syncFiles fsyncs the log and both indexes.
func (s *segment) syncFiles() error {
	return errors.Join(s.log.Sync(), s.offFile.Sync(), s.timFile.Sync())
}

// syncAll fsyncs the segment's files, its .txnindex too.
func (s *segment) syncAll(fsys FS) error {
	return errors.Join(s.syncFiles(), s.syncTxnIndex(fsys))
}

// hdrPool holds header buffers for readers (a stack array passed to an
// interface method would escape and allocate on every read).
var hdrPool = sync.Pool{New: func() any { return new([HeaderSize]byte) }}

// readHeader reads the batch header at pos, below limit, and checks that it
// is sane and the batch ends by limit.
func (s *segment) readHeader(h *[HeaderSize]byte, pos, limit int64) error {
	if pos+HeaderSize > limit {
		return s.corrupt(pos, "batch header past the committed end")
	}
	if _, err := s.log.ReadAt(h[:], pos); err != nil {
		if err == io.EOF {
			return s.corrupt(pos, "file shorter than its committed size (truncated concurrently?)")
		}
		return fmt.Errorf("segment: read %s at %d: %w", s.logPath, pos, err)
	}
	if why := checkHeader(h[:]); why != "" {
		return s.corrupt(pos, why)
	}
	if pos+batchSize(h[:]) > limit {
		return s.corrupt(pos, "batch past the committed end")
	}
	return nil
}

func (s *segment) corrupt(pos int64, why string) error {
	return &CorruptError{File: s.logPath, Pos: pos, Offset: -1, Reason: why}
}

// locate returns the position and header of the first batch below limit
// whose last offset is >= off; found is false if there is none.
func (s *segment) locate(h *[HeaderSize]byte, off, limit int64) (pos int64, found bool, err error) {
	pos = s.ix.lookupOffset(s.relative(off), limit)
	for pos < limit {
		if err := s.readHeader(h, pos, limit); err != nil {
			return 0, false, err
		}
		if BatchBaseOffset(h[:])+int64(batchLastOffsetDelta(h[:])) >= off {
			return pos, true, nil
		}
		pos += batchSize(h[:])
	}
	return limit, false, nil
}

// rangeEnd returns the end of the whole batches that start at pos (whose
// header is in h) and fit in maxBytes, below limit (at least one batch),
// and the offset after the last of them.
func (s *segment) rangeEnd(h *[HeaderSize]byte, pos int64, maxBytes int, limit int64) (end, next int64, err error) {
	end = pos + batchSize(h[:])
	next = BatchBaseOffset(h[:]) + int64(batchLastOffsetDelta(h[:])) + 1
	want := min(pos+int64(max(maxBytes, 0)), limit)
	if end >= want {
		return end, next, nil
	}
	// Start scanning at the last indexed batch that starts before want.
	p := max(s.ix.lookupPosition(want-1), end)
	for p < want {
		if err := s.readHeader(h, p, limit); err != nil {
			return 0, 0, err
		}
		if p+batchSize(h[:]) > want {
			// Offsets are contiguous: this batch starts where the range ends.
			return p, BatchBaseOffset(h[:]), nil
		}
		next = BatchBaseOffset(h[:]) + int64(batchLastOffsetDelta(h[:])) + 1
		p += batchSize(h[:])
	}
	return p, next, nil
}

// minTimestamp is the max timestamp of an empty segment.
const minTimestamp = math.MinInt64
