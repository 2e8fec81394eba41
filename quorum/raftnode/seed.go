package raftnode

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.etcd.io/raft/v3/raftpb"
)

// ErrNotEmpty is returned by Seed when dir already holds a node's data.
var ErrNotEmpty = errors.New("raftnode: the directory already holds raft data")

// Seed prepares dir for a first start whose state machine begins as the
// snapshot that write produces, taken at index: the log then starts at
// index+1, so every entry appended later has a larger index (quorum uses
// this to import a ZooKeeper data tree whose zxids must keep growing).
// peers is the membership, as Config.Peers. Seed writes into a new
// directory beside dir and renames it to dir only once everything is
// durable: a failure leaves dir as it was. dir must not exist or be empty.
func Seed(dir string, peers []Peer, index uint64, write func(io.Writer) error) error {
	if des, err := os.ReadDir(dir); err == nil && len(des) > 0 {
		return fmt.Errorf("%w: %s", ErrNotEmpty, dir)
	}
	tmp := dir + ".seed"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	cfg := Config{Peers: peers}
	st := cfg.bootstrapState()
	// Term 1: the snapshot's term; the first election moves past it.
	st.Term, st.Commit = 1, index
	meta := &raftpb.SnapshotMetadata{Index: new(index), Term: new(uint64(1)), ConfState: st.confState()}
	err := writeSnapshotFile(tmp, meta, write)
	if err == nil {
		err = writeState(tmp, st)
	}
	if err == nil {
		os.Remove(dir) // empty, if it exists
		err = os.Rename(tmp, dir)
	}
	if err == nil {
		err = syncDir(filepath.Dir(dir))
	}
	if err != nil {
		os.RemoveAll(tmp)
	}
	return err
}

// Replay reads a stopped node's state from dir without starting it: it
// hands the newest valid snapshot's state machine bytes to restore (if
// there is one), then the payload of every committed entry after it to
// apply, in index order, and returns the last index it covered. Committed
// means up to the commit index the state file records or, for a single
// voter, the whole log (which it commits as soon as it starts).
func Replay(dir string, restore func(io.Reader) error, apply func(index uint64, data []byte)) (uint64, error) {
	st, err := readState(dir)
	if err != nil {
		return 0, err
	}
	if st == nil {
		return 0, fmt.Errorf("raftnode: no raft data in %s", dir)
	}
	cfg := Config{Dir: dir, ID: 1}
	cfg.setDefaults()
	s, rec, err := openStorage(&cfg)
	if err != nil {
		return 0, err
	}
	defer s.log.Close()
	if rec.snap != nil {
		f, info, err := openSnapshot(filepath.Join(dir, snapName(rec.snap.meta.GetIndex())))
		if err != nil {
			return 0, err
		}
		err = restore(io.NewSectionReader(f, info.dataOff, info.dataLen))
		f.Close()
		if err != nil {
			return 0, err
		}
	}
	last := s.log.NextIndex() - 1
	if cs := st.confState(); rec.snap != nil {
		cs = rec.snap.meta.GetConfState()
		if len(cs.GetVoters()) > 1 {
			last = min(last, max(st.Commit, rec.applied))
		}
	} else if len(cs.GetVoters()) > 1 {
		last = min(last, st.Commit)
	}
	ents, err := s.log.Entries(rec.applied+1, last+1)
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if e.GetType() != raftpb.EntryNormal {
			continue
		}
		if _, _, payload, ok := decodeFrame(e.GetData()); ok {
			apply(e.GetIndex(), payload)
		}
	}
	return max(last, rec.applied), nil
}
