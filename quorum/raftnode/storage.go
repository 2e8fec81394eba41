package raftnode

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// storage is the raft.Storage of a Node and its durable side: the
// MemoryStorage is the in-memory view of the log since the last snapshot
// (what raft reads), and log, the state file and the snapshot files are
// what survives a restart. Only the loop goroutine uses it once the loop
// runs (raft calls the Storage methods from RawNode, on that goroutine).
type storage struct {
	*raft.MemoryStorage
	dir    string
	log    logStore
	logger *slog.Logger
	// synced is the last index of the log known durable. Invariant:
	// every entry <= synced is fsynced (committed entries are never
	// truncated, so a committed entry <= synced stays durable).
	synced uint64
	// state is the content of the state file as last written.
	// Invariant: Term and Vote equal raft's durable HardState.
	state persistedState
	// floor is where raft sees the log start (memtail.go); the
	// MemoryStorage holds only the entries from a little below the
	// applied index on.
	floor floor
	// snap is the metadata of the newest snapshot (local or received),
	// what Snapshot answers with.
	snap *raftpb.SnapshotMetadata
	// tail is how many applied entries trimMemory keeps in memory.
	tail uint64
}

// recovered is what openStorage found on disk.
type recovered struct {
	snap    *snapInfo // the newest valid snapshot, or nil
	hard    *raftpb.HardState
	first   bool   // a first start: nothing was on disk
	applied uint64 // the snapshot's index (0 if none)
}

// openStorage opens or creates the storage in cfg.Dir: the newest valid
// snapshot, the log entries after it and the HardState.
func openStorage(cfg *Config) (*storage, *recovered, error) {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	st, err := readState(cfg.Dir)
	if err != nil {
		return nil, nil, err
	}
	rec := &recovered{first: st == nil}
	if st == nil {
		st = cfg.bootstrapState()
		if err := writeState(cfg.Dir, st); err != nil {
			return nil, nil, err
		}
	}
	lg, err := cfg.openLog(filepath.Join(cfg.Dir, "log"), cfg.Logger)
	if err != nil {
		return nil, nil, err
	}
	s := &storage{MemoryStorage: raft.NewMemoryStorage(), dir: cfg.Dir, log: lg, logger: cfg.Logger, state: *st, tail: cfg.memTail}
	if err := s.recover(rec); err != nil {
		lg.Close()
		return nil, nil, err
	}
	return s, rec, nil
}

// recover loads the newest valid snapshot's metadata, aligns the log with
// it and loads the log tail and the HardState into the MemoryStorage.
func (s *storage) recover(rec *recovered) error {
	purgeSnapshots(s.dir, int(^uint(0)>>1), false) // leftover .tmp files only
	rec.snap = s.newestSnapshot()
	meta := &raftpb.SnapshotMetadata{ConfState: s.state.confState()}
	if rec.snap != nil {
		meta = rec.snap.meta
	}
	if err := s.MemoryStorage.ApplySnapshot(raftpb.EnsureSnapshot(&raftpb.Snapshot{Metadata: meta})); err != nil {
		return err
	}
	snapIndex := meta.GetIndex()
	rec.applied = snapIndex
	s.floor, s.snap = floor{snapIndex, meta.GetTerm()}, meta
	if err := s.alignLog(snapIndex, meta.GetTerm()); err != nil {
		return err
	}
	if err := s.log.Sync(); err != nil { // whatever a crash left unsynced
		return err
	}
	s.synced = s.log.NextIndex() - 1
	ents, err := s.log.Entries(snapIndex+1, s.log.NextIndex())
	if err != nil {
		return err
	}
	if err := s.MemoryStorage.Append(ents); err != nil {
		return err
	}
	last := s.log.NextIndex() - 1
	commit := min(max(s.state.Commit, snapIndex), last)
	if commit < s.state.Commit {
		s.logger.Warn("raftnode: the log ends before the recorded commit index", "commit", s.state.Commit, "last", last)
	}
	rec.hard = &raftpb.HardState{Term: new(s.state.Term), Vote: new(s.state.Vote), Commit: new(commit)}
	return s.MemoryStorage.SetHardState(rec.hard)
}

// newestSnapshot returns the newest snapshot file that checks out, or nil.
// Damaged files are skipped (and left for an operator), with a warning.
func (s *storage) newestSnapshot() *snapInfo {
	idx, err := listSnapshots(s.dir)
	if err != nil {
		s.logger.Warn("raftnode: list snapshots", "err", err)
		return nil
	}
	for _, i := range idx {
		f, info, err := openSnapshot(filepath.Join(s.dir, snapName(i)))
		if err != nil {
			s.logger.Warn("raftnode: skipping a damaged snapshot", "index", i, "err", err)
			continue
		}
		f.Close()
		if info.meta.GetIndex() != i {
			s.logger.Warn("raftnode: snapshot file name and index disagree", "index", i, "meta", info.meta.GetIndex())
			continue
		}
		return info
	}
	return nil
}

// alignLog makes the log continue the snapshot at (index, term): a log that
// ends before it, or whose entry at index has another term (a snapshot
// from the leader replaced the log and a crash came before the log was
// reset), is reset to start after it.
func (s *storage) alignLog(index, term uint64) error {
	first, next := s.log.FirstIndex(), s.log.NextIndex()
	if first > index+1 {
		return fmt.Errorf("raftnode: the log starts at %d, after the snapshot at %d", first, index)
	}
	if next <= index {
		// The log holds nothing after the snapshot.
		return s.log.Reset(index + 1)
	}
	if index == 0 || index < first {
		return nil // nothing to compare (no snapshot, or compacted away)
	}
	e, err := s.log.Entries(index, index+1)
	if err != nil {
		return err
	}
	if e[0].GetTerm() != term {
		s.logger.Warn("raftnode: the log disagrees with the snapshot; dropping it", "index", index, "term", term, "logTerm", e[0].GetTerm())
		return s.log.Reset(index + 1)
	}
	return nil
}

// Snapshot implements raft.Storage: the metadata held in memory, with the
// bytes of the snapshot file as Data (what MsgSnap carries).
func (s *storage) Snapshot() (*raftpb.Snapshot, error) {
	snap := &raftpb.Snapshot{Metadata: proto.Clone(s.snap).(*raftpb.SnapshotMetadata)}
	if s.snap.GetIndex() == 0 {
		return snap, nil
	}
	data, err := os.ReadFile(filepath.Join(s.dir, snapName(s.snap.GetIndex())))
	if err != nil {
		s.logger.Warn("raftnode: read snapshot to send", "err", err)
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	snap.Data = data
	return snap, nil
}

// save persists what rd asks to: a snapshot from the leader, new entries
// and the HardState, with one fsync of the log. It runs before rd's
// messages are sent and before anything is applied.
func (s *storage) save(rd *raft.Ready) error {
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := s.saveSnapshot(rd.Snapshot); err != nil {
			return err
		}
	}
	if len(rd.Entries) > 0 {
		s.synced = min(s.synced, rd.Entries[0].GetIndex()-1)
		if err := s.log.Append(rd.Entries); err != nil {
			return err
		}
	}
	if len(rd.Entries) > 0 || rd.MustSync {
		if err := s.log.Sync(); err != nil {
			return err
		}
		s.synced = s.log.NextIndex() - 1
	}
	if hs := rd.HardState; hs != nil {
		if hs.GetTerm() != s.state.Term || hs.GetVote() != s.state.Vote {
			if err := s.writeHardState(hs); err != nil {
				return err
			}
		}
		if err := s.MemoryStorage.SetHardState(hs); err != nil {
			return err
		}
	}
	return s.MemoryStorage.Append(rd.Entries)
}

// writeHardState replaces the state file with hs. Commit is only a hint
// (it is written with term and vote changes, at snapshots and at Stop);
// raft learns the commit index from the leader again.
func (s *storage) writeHardState(hs *raftpb.HardState) error {
	st := s.state
	st.Term, st.Vote, st.Commit = hs.GetTerm(), hs.GetVote(), hs.GetCommit()
	if err := writeState(s.dir, &st); err != nil {
		return err
	}
	s.state = st
	return nil
}

// saveSnapshot stores a snapshot received from the leader: its file (the
// bytes Step checked), then an empty log restarting after it.
func (s *storage) saveSnapshot(snap *raftpb.Snapshot) error {
	meta := snap.GetMetadata()
	if err := writeFileAtomic(s.dir, snapName(meta.GetIndex()), snap.GetData()); err != nil {
		return err
	}
	s.synced = min(s.synced, meta.GetIndex())
	if err := s.log.Reset(meta.GetIndex() + 1); err != nil {
		return err
	}
	// The MemoryStorage keeps the metadata only; Snapshot reads the file.
	if err := s.MemoryStorage.ApplySnapshot(&raftpb.Snapshot{Metadata: meta}); err != nil {
		return err
	}
	s.floor, s.snap = floor{meta.GetIndex(), meta.GetTerm()}, meta
	return nil
}

// compact records a snapshot taken locally at meta's index, moves the
// floor (raft's first index) to index-margin, drops the entries below it
// from memory, and the log entries below both that and keepFrom (the log
// keeps what the oldest retained snapshot needs, so Start can fall back
// to it if a newer one is damaged).
func (s *storage) compact(meta *raftpb.SnapshotMetadata, margin, keepFrom uint64) error {
	if meta.GetIndex() <= s.snap.GetIndex() {
		return nil // a newer snapshot came from the leader meanwhile
	}
	s.snap = meta
	if meta.GetIndex() <= margin {
		return nil
	}
	at := meta.GetIndex() - margin
	if at > s.floor.index {
		term, err := s.Term(at)
		if err != nil {
			return err
		}
		if first, _ := s.MemoryStorage.FirstIndex(); at >= first {
			if err := s.MemoryStorage.Compact(at); err != nil {
				return err
			}
		}
		s.floor = floor{at, term}
	}
	if at = min(at, keepFrom); at > s.log.FirstIndex() {
		return s.log.Compact(at)
	}
	return nil
}

// close records the commit index (a clean stop restarts from it) and
// closes the log.
func (s *storage) close(commit uint64) error {
	var err error
	if commit > s.state.Commit {
		st := s.state
		st.Commit = commit
		if err = writeState(s.dir, &st); err == nil {
			s.state = st
		}
	}
	return errors.Join(err, s.log.Sync(), s.log.Close())
}
