package raftnode

import (
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// memTailEntries is how many applied entries the MemoryStorage keeps in
// memory; older ones (down to the floor) are read back from the log when
// raft asks for them (a follower that lags, a restart's catch-up). Without
// it every entry since the last snapshot (up to SnapshotEntries, 100000)
// stays on the heap: about as much memory again as a tree of 100k znodes
// of 100 bytes. Recent entries (what an up-to-date follower is sent) stay
// in memory.
const memTailEntries = 8192

// floor is raft's view of where the log starts: FirstIndex() is
// floor.index+1 and Term(floor.index) is floor.term (the snapshot, or the
// point the log was compacted to behind one). Invariant: the log holds
// every entry from floor.index+1 (and floor.index itself unless it is a
// snapshot's) to LastIndex; the MemoryStorage holds a suffix of them.
type floor struct{ index, term uint64 }

// FirstIndex implements raft.Storage: the first entry raft may read, from
// memory or from the log.
func (s *storage) FirstIndex() (uint64, error) { return s.floor.index + 1, nil }

// Term implements raft.Storage: from memory, or from the log for an entry
// trimmed from memory.
func (s *storage) Term(i uint64) (uint64, error) {
	switch {
	case i == s.floor.index:
		return s.floor.term, nil
	case i < s.floor.index:
		return 0, raft.ErrCompacted
	}
	t, err := s.MemoryStorage.Term(i)
	if err != raft.ErrCompacted {
		return t, err
	}
	ents, err := s.log.Entries(i, i+1)
	if err != nil {
		return 0, err
	}
	return ents[0].GetTerm(), nil
}

// Entries implements raft.Storage: [lo, hi) from memory, or, when lo was
// trimmed from memory, a prefix of it read from the log (at most
// memTailEntries entries and maxSize bytes, at least one entry; raft
// takes a short answer as a size limit and asks again).
func (s *storage) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	if lo <= s.floor.index {
		return nil, raft.ErrCompacted
	}
	memFirst, _ := s.MemoryStorage.FirstIndex()
	if lo >= memFirst {
		return s.MemoryStorage.Entries(lo, hi, maxSize)
	}
	hi = min(hi, memFirst, lo+memTailEntries)
	ents, err := s.log.Entries(lo, hi)
	if err != nil {
		return nil, err
	}
	return limitSize(ents, maxSize), nil
}

// limitSize returns the longest prefix of ents (at least one entry) whose
// size is at most maxSize, as raft's own limitSize.
func limitSize(ents []*raftpb.Entry, maxSize uint64) []*raftpb.Entry {
	var size uint64
	for i, e := range ents {
		size += uint64(proto.Size(e))
		if i > 0 && size > maxSize {
			return ents[:i]
		}
	}
	return ents
}

// trimMemory drops from memory the entries more than s.tail below
// applied: they are durable in the log (an entry is applied only once
// durable), where Entries and Term find them. It trims once memory holds
// twice the tail, so that the copy Compact makes is paid once per s.tail
// entries.
func (s *storage) trimMemory(applied uint64) error {
	first, _ := s.MemoryStorage.FirstIndex()
	if applied < first+2*s.tail {
		return nil
	}
	at := applied - s.tail
	if last, _ := s.MemoryStorage.LastIndex(); at > last {
		return nil
	}
	return s.MemoryStorage.Compact(at)
}
