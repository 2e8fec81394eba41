package raftnode

import (
	"encoding/binary"
	"fmt"
	"log/slog"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zkafka/zkafka/store/segment"
)

// segLog is the logStore of a Node: a segment.Log in which the raft entry
// with index i is the one-offset record batch at offset i. Offset 0 is
// never used: a new log is started at offset 1 (SetStartOffset), so
// StartOffset is the first index held and NextOffset the next index.
type segLog struct {
	log     *segment.Log
	buf     []byte // scratch for one batch, reused by Append
	payload []byte // scratch for one entry's payload
}

// readChunk is how many bytes of batches Entries reads at a time.
const readChunk = 1 << 20

// preallocateBytes is how far ahead of its data the raft log keeps its
// active file allocated (capped at the segment size, 64 MiB by default, so
// one fallocate per segment), as Apache ZooKeeper preallocates its txn log
// 64 MiB at a time: the fdatasync once per Ready then seldom has to commit
// a size change. It cut append+fsync by about a third in store/segment's
// BenchmarkAppendSync (fsync p50 64–69 → 40–41 µs); zkbench's single-session
// writes moved 10–20 % up, within its run-to-run noise.
const preallocateBytes = 64 << 20

// openSegLog opens (recovering a torn tail) or creates the raft log in dir,
// rolling to a new segment file every segmentBytes; compaction deletes
// whole segments, so smaller files free space sooner. A nil fs is the
// operating system's.
func openSegLog(dir string, segmentBytes int64, fs segment.FS, logger *slog.Logger) (*segLog, error) {
	l, err := segment.Open(dir, segment.Options{SegmentBytes: segmentBytes,
		PreallocateBytes: preallocateBytes, FS: fs, Logger: logger})
	if err != nil {
		return nil, err
	}
	if l.NextOffset() == 0 {
		// A new log: raft indexes start at 1.
		if err := l.SetStartOffset(1); err != nil {
			l.Close()
			return nil, err
		}
	}
	return &segLog{log: l}, nil
}

func (s *segLog) FirstIndex() uint64 { return uint64(s.log.StartOffset()) }
func (s *segLog) NextIndex() uint64  { return uint64(s.log.NextOffset()) }
func (s *segLog) Sync() error        { return s.log.Sync() }
func (s *segLog) Close() error       { return s.log.Close() }

func (s *segLog) Append(ents []*raftpb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	first := ents[0].GetIndex()
	if first < s.FirstIndex() || first > s.NextIndex() {
		return fmt.Errorf("%w: append at %d to [%d, %d)", errLogGap, first, s.FirstIndex(), s.NextIndex())
	}
	if first < s.NextIndex() {
		if _, err := s.log.Truncate(int64(first)); err != nil {
			return err
		}
	}
	// One batch per entry, all written with one syscall.
	s.buf = s.buf[:0]
	for _, e := range ents {
		s.payload = appendEntryPayload(s.payload[:0], e)
		s.buf = segment.AppendBatch(s.buf, s.payload, 1, 0)
	}
	off, err := s.log.AppendBatches(s.buf)
	if err != nil {
		return err
	}
	if uint64(off) != first {
		return fmt.Errorf("raftnode: entry %d was stored at offset %d", first, off)
	}
	if cap(s.buf) > 4<<20 {
		s.buf = nil // a burst's buffer is not kept
	}
	return nil
}

func (s *segLog) Entries(lo, hi uint64) ([]*raftpb.Entry, error) {
	if lo < s.FirstIndex() || hi > s.NextIndex() || lo > hi {
		return nil, fmt.Errorf("raftnode: entries [%d, %d) outside [%d, %d)", lo, hi, s.FirstIndex(), s.NextIndex())
	}
	ents := make([]*raftpb.Entry, 0, hi-lo)
	var buf []byte
	for next := lo; next < hi; {
		var err error
		buf, err = s.log.ReadBatches(int64(next), readChunk, buf[:0])
		if err != nil {
			return nil, err
		}
		if len(buf) == 0 {
			return nil, fmt.Errorf("raftnode: log ends at %d, before %d", next, hi)
		}
		if next, err = decodeBatches(buf, next, hi, &ents); err != nil {
			return nil, err
		}
	}
	return ents, nil
}

// decodeBatches appends to *ents the entries [next, hi) found in buf, whole
// one-offset batches, and returns the index after the last one decoded.
func decodeBatches(buf []byte, next, hi uint64, ents *[]*raftpb.Entry) (uint64, error) {
	for len(buf) >= segment.HeaderSize && next < hi {
		size := int(int32(binary.BigEndian.Uint32(buf[8:12]))) + 12
		if size < segment.HeaderSize || size > len(buf) {
			return next, fmt.Errorf("raftnode: bad batch length %d at index %d", size, next)
		}
		base := uint64(segment.BatchBaseOffset(buf))
		switch {
		case base < next: // a batch before the one asked for
		case base == next:
			e, err := decodeEntryPayload(base, segment.Payload(buf[:size]))
			if err != nil {
				return next, err
			}
			*ents = append(*ents, e)
			next++
		default:
			return next, fmt.Errorf("raftnode: log skips from index %d to %d", next, base)
		}
		buf = buf[size:]
	}
	return next, nil
}

func (s *segLog) Compact(index uint64) error { return s.log.SetStartOffset(int64(index)) }

// Reset empties the log: Truncate at the start offset removes every entry
// (keeping, at worst, whole segments below the start that no read can
// reach), and SetStartOffset above the end restarts the log at next.
func (s *segLog) Reset(next uint64) error {
	if _, err := s.log.Truncate(s.log.StartOffset()); err != nil {
		return err
	}
	if next < s.FirstIndex() {
		return fmt.Errorf("raftnode: reset the log to %d, below its start %d", next, s.FirstIndex())
	}
	return s.log.SetStartOffset(int64(next))
}
