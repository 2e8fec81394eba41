package raftnode

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3/raftpb"
)

// logStore is the durable raft log: the entries with contiguous indexes
// FirstIndex() .. NextIndex()-1. It is empty when FirstIndex() ==
// NextIndex(). Only the loop goroutine uses it (and Start, before the loop).
//
// The implementation is segLog (a segment.Log); memLog keeps the entries in
// memory, the model that segLog is checked against (logstore_test.go).
type logStore interface {
	// FirstIndex returns the index of the first entry held (at least 1).
	FirstIndex() uint64
	// NextIndex returns the index the next appended entry will get.
	NextIndex() uint64
	// Append writes ents, whose indexes are contiguous and whose first
	// index is in [FirstIndex(), NextIndex()]. Entries held from
	// ents[0].Index on are removed first (a conflicting append). The
	// entries are durable after the next Sync.
	Append(ents []*raftpb.Entry) error
	// Sync makes every appended entry durable (one fsync).
	Sync() error
	// Entries returns the entries [lo, hi), FirstIndex() <= lo <= hi <=
	// NextIndex().
	Entries(lo, hi uint64) ([]*raftpb.Entry, error)
	// Compact allows the entries below index to be dropped: FirstIndex()
	// becomes index (whole segments below it are deleted). index <=
	// NextIndex().
	Compact(index uint64) error
	// Reset drops every entry; afterwards FirstIndex() == NextIndex() ==
	// next. It is used when a snapshot from the leader replaces the log.
	Reset(next uint64) error
	// Close releases the files.
	Close() error
}

// Layout of one raft entry in the log (the payload of a one-offset record
// batch whose offset is the entry's index):
//
//	+----------+-------------+-------------------+
//	| type (1) | term (8 BE) | data (the rest)    |
//	+----------+-------------+-------------------+
const entryHeaderSize = 9

// appendEntryPayload appends the log payload of e to dst.
func appendEntryPayload(dst []byte, e *raftpb.Entry) []byte {
	dst = append(dst, byte(e.GetType()))
	dst = binary.BigEndian.AppendUint64(dst, e.GetTerm())
	return append(dst, e.GetData()...)
}

// decodeEntryPayload decodes the payload of the entry at index. The data
// is copied, so the entry does not alias p.
func decodeEntryPayload(index uint64, p []byte) (*raftpb.Entry, error) {
	if len(p) < entryHeaderSize {
		return nil, fmt.Errorf("raftnode: entry %d: payload of %d bytes is shorter than its header", index, len(p))
	}
	typ := raftpb.EntryType(p[0])
	if _, ok := raftpb.EntryType_name[int32(typ)]; !ok {
		return nil, fmt.Errorf("raftnode: entry %d: unknown entry type %d", index, p[0])
	}
	e := &raftpb.Entry{
		Index: new(index),
		Term:  new(binary.BigEndian.Uint64(p[1:])),
		Type:  typ.Enum(),
	}
	if len(p) > entryHeaderSize {
		e.Data = append([]byte(nil), p[entryHeaderSize:]...)
	}
	return e, nil
}

var errLogGap = errors.New("raftnode: append leaves a gap in the log")

// memLog is a logStore in memory: the model for tests.
type memLog struct {
	first uint64
	ents  []*raftpb.Entry // ents[i] has index first+i
}

func newMemLog() *memLog { return &memLog{first: 1} }

func (m *memLog) FirstIndex() uint64 { return m.first }
func (m *memLog) NextIndex() uint64  { return m.first + uint64(len(m.ents)) }
func (m *memLog) Sync() error        { return nil }
func (m *memLog) Close() error       { return nil }

func (m *memLog) Append(ents []*raftpb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	i := ents[0].GetIndex()
	if i < m.first || i > m.NextIndex() {
		return fmt.Errorf("%w: append at %d to [%d, %d)", errLogGap, i, m.first, m.NextIndex())
	}
	m.ents = append(m.ents[:i-m.first:i-m.first], ents...)
	return nil
}

func (m *memLog) Entries(lo, hi uint64) ([]*raftpb.Entry, error) {
	if lo < m.first || hi > m.NextIndex() || lo > hi {
		return nil, fmt.Errorf("raftnode: entries [%d, %d) outside [%d, %d)", lo, hi, m.first, m.NextIndex())
	}
	return append([]*raftpb.Entry(nil), m.ents[lo-m.first:hi-m.first]...), nil
}

func (m *memLog) Compact(index uint64) error {
	if index <= m.first {
		return nil
	}
	if index > m.NextIndex() {
		return m.Reset(index)
	}
	m.ents = append([]*raftpb.Entry(nil), m.ents[index-m.first:]...)
	m.first = index
	return nil
}

func (m *memLog) Reset(next uint64) error {
	m.first, m.ents = next, nil
	return nil
}
