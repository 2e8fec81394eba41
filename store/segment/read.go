package segment

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// FileRange is a byte range of a segment's .log file holding whole
// batches: what a fetch hands to sendfile. It holds a reference to the
// segment, so the file stays open (and, once deleted by retention or
// truncation, readable through the open descriptor) until Release; every
// FileRange from Read must be released exactly once. The bytes of a range
// are immutable unless Truncate cuts into them (see Log.Truncate).
type FileRange struct {
	// File is the segment's .log file, for sendfile with an explicit
	// offset (never use its seek offset: it is shared). It is nil when Len
	// is 0 or the FS is not backed by operating-system files.
	File *os.File
	// Pos is the position in File of the first byte.
	Pos int64
	// Len is the number of bytes; 0 at the end of the log.
	Len int64
	// BaseOffset is the base offset of the first batch, or the log's
	// NextOffset when Len is 0.
	BaseOffset int64
	// NextOffset is the offset after the last batch of the range: where
	// the next Read continues. Equal to BaseOffset when Len is 0.
	NextOffset int64

	seg *segment
}

// Release drops the range's reference to its segment. It may be called on
// an empty range; calling it twice on the same FileRange is harmless.
func (r *FileRange) Release() {
	if r.seg != nil {
		r.seg.release()
		r.seg = nil
	}
}

// ReadAt reads the range's bytes at off, relative to Pos, like
// io.ReaderAt. It must not be called after Release.
func (r *FileRange) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("segment: negative offset")
	}
	if off >= r.Len || r.seg == nil {
		return 0, io.EOF
	}
	short := false
	if rest := r.Len - off; int64(len(p)) > rest {
		p, short = p[:rest], true
	}
	n, err := r.seg.log.ReadAt(p, r.Pos+off)
	if err == nil && short {
		err = io.EOF
	}
	return n, err
}

// WriteTo writes the range to w: with sendfile(2) when w is a socket or
// file on Linux, by copying otherwise. It must not be called after
// Release.
func (r *FileRange) WriteTo(w io.Writer) (int64, error) {
	if r.Len == 0 {
		return 0, nil
	}
	if n, handled, err := sendFile(w, r); handled {
		return n, err
	}
	return io.Copy(w, io.NewSectionReader(r, 0, r.Len))
}

// Read returns the batches starting with the one that contains offset,
// whole batches up to maxBytes in total, from a single segment; at least
// one whole batch even if it is larger than maxBytes. offset ==
// NextOffset gives an empty range. An offset below StartOffset or above
// NextOffset gives ErrOffsetOutOfRange. Read does not block appends;
// Release the range when done.
func (l *Log) Read(offset int64, maxBytes int) (FileRange, error) {
	return l.ReadBelow(offset, maxBytes, math.MaxInt64)
}

// ReadBelow is Read of the batches that end below end only (a Kafka
// leader's read for consumers, bounded by the high watermark): a batch
// that holds end or any later offset is left out, and an offset at or
// past end gives an empty range at offset.
func (l *Log) ReadBelow(offset int64, maxBytes int, end int64) (FileRange, error) {
	for {
		r, retry, err := l.tryRead(offset, maxBytes, end)
		if !retry {
			return r, err
		}
	}
}

// tryRead is one attempt of ReadBelow over the current segment list;
// retry is true if the list changed under it.
func (l *Log) tryRead(offset int64, maxBytes int, end int64) (r FileRange, retry bool, err error) {
	segs := l.list()
	next := segs[len(segs)-1].next.Load()
	if l.closed.Load() {
		return r, false, ErrClosed
	}
	if offset < l.start.Load() || offset > next {
		return r, false, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, l.start.Load(), next)
	}
	if offset == next {
		return FileRange{BaseOffset: next, NextOffset: next}, false, nil
	}
	if offset >= end {
		return FileRange{BaseOffset: offset, NextOffset: offset}, false, nil
	}
	if offset < segs[0].base {
		return r, true, nil // the start moved up since segs was loaded
	}
	h := hdrPool.Get().(*[HeaderSize]byte)
	defer hdrPool.Put(h)
	for i := findSegment(segs, offset); i < len(segs); i++ {
		s := segs[i]
		if !s.acquire() {
			return r, true, nil
		}
		limit := s.size.Load()
		bounded := false
		if end < s.next.Load() {
			// Stop before the first batch that reaches end.
			p, found, err := s.locate(h, end, limit)
			if err != nil {
				s.release()
				return r, false, err
			}
			limit, bounded = p, found
		}
		pos, found, err := s.locate(h, offset, limit)
		if err == nil && !found && bounded {
			s.release()
			return FileRange{BaseOffset: offset, NextOffset: offset}, false, nil
		}
		if err == nil && found {
			base := BatchBaseOffset(h[:])
			var end, after int64
			if end, after, err = s.rangeEnd(h, pos, maxBytes, limit); err == nil {
				return FileRange{File: s.osFile, Pos: pos, Len: end - pos,
					BaseOffset: base, NextOffset: after, seg: s}, false, nil
			}
		}
		s.release()
		if err != nil {
			return r, false, err
		}
	}
	// Only a concurrent Truncate can make the offset vanish.
	retry = l.list()[0] != segs[0] || l.NextOffset() != next
	return FileRange{BaseOffset: next, NextOffset: next}, retry, nil
}

// ReadBatches appends to dst the bytes Read(offset, maxBytes) would
// return and returns the extended slice: whole batches, at least one.
func (l *Log) ReadBatches(offset int64, maxBytes int, dst []byte) ([]byte, error) {
	r, err := l.Read(offset, maxBytes)
	if err != nil {
		return dst, err
	}
	defer r.Release()
	n := len(dst)
	dst = append(dst, make([]byte, r.Len)...)
	if _, err := r.ReadAt(dst[n:], 0); err != nil && err != io.EOF {
		return dst[:n], fmt.Errorf("segment: read offset %d: %w", offset, err)
	}
	return dst, nil
}

// OffsetForTime returns the base offset of the first batch whose
// maxTimestamp is >= ts (Kafka ListOffsets by timestamp), but not below
// StartOffset; NextOffset if there is none. It uses the time index to skip
// segments and the start of the segment it searches.
func (l *Log) OffsetForTime(ts int64) (int64, error) {
	if l.closed.Load() {
		return -1, ErrClosed
	}
	segs := l.list()
	next := segs[len(segs)-1].next.Load()
	start := l.start.Load()
	h := hdrPool.Get().(*[HeaderSize]byte)
	defer hdrPool.Put(h)
	for _, s := range segs {
		if s.maxTs.Load() < ts || !s.acquire() {
			continue
		}
		off, found, err := s.findTime(h, ts)
		s.release()
		if err != nil {
			return -1, err
		}
		if found {
			return min(max(off, start), next), nil
		}
	}
	return next, nil
}

// findTime scans s for the first batch with maxTimestamp >= ts, starting
// after the last time index entry below ts.
func (s *segment) findTime(h *[HeaderSize]byte, ts int64) (int64, bool, error) {
	limit := s.size.Load()
	pos := int64(0)
	if rel, ok := s.ix.lookupTime(ts); ok {
		pos = s.ix.lookupOffset(rel, limit)
	}
	for pos < limit {
		if err := s.readHeader(h, pos, limit); err != nil {
			return 0, false, err
		}
		if batchMaxTimestamp(h[:]) >= ts {
			return BatchBaseOffset(h[:]), true, nil
		}
		pos += batchSize(h[:])
	}
	return 0, false, nil
}
