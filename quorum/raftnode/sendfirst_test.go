package raftnode

import (
	"context"
	"io/fs"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/zkafka/zkafka/store/segment"
)

// gateFS is the operating system's FS whose fsyncs wait while hold is set
// (until release is closed), and which counts the bytes written to it.
type gateFS struct {
	segment.FS
	hold    atomic.Bool
	release chan struct{}
	once    sync.Once
	written atomic.Int64
}

// open lets the held fsyncs and all later ones through.
func (g *gateFS) open() {
	g.hold.Store(false)
	g.once.Do(func() { close(g.release) })
}

func newGateFS() *gateFS { return &gateFS{FS: segment.OS(), release: make(chan struct{})} }

func (g *gateFS) OpenFile(name string, flag int, perm fs.FileMode) (segment.File, error) {
	f, err := g.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &gateFile{File: f, g: g}, nil
}

type gateFile struct {
	segment.File
	g *gateFS
}

func (f *gateFile) WriteAt(p []byte, off int64) (int, error) {
	f.g.written.Add(int64(len(p)))
	return f.File.WriteAt(p, off)
}

func (f *gateFile) Sync() error {
	if f.g.hold.Load() {
		<-f.g.release
	}
	return f.File.Sync()
}

// TestLeaderReplicatesDuringItsFsync: a leader sends its appends to the
// followers before its own fsync, so the followers write an entry while
// the leader's fsync of it is still held; the proposal is answered only
// after that fsync.
func TestLeaderReplicatesDuringItsFsync(t *testing.T) {
	gates := map[uint64]*gateFS{1: newGateFS(), 2: newGateFS(), 3: newGateFS()}
	// Elections take 1-2 s here, so a follower that writes during the
	// held fsync writes the leader's append, not a new leader's entry.
	c := newCluster(t, voters(1, 2, 3), func(cfg *Config) {
		cfg.LogFS = gates[cfg.ID]
		cfg.TickInterval, cfg.ElectionTicks = 50*time.Millisecond, 20
	})
	lead := c.leader(1, 2, 3)
	term := c.nodes[lead].Status().Term
	mustPropose(t, c.nodes[lead], "warm-up")
	c.converged(1, 1, 2, 3)

	before := map[uint64]int64{}
	for id, g := range gates {
		before[id] = g.written.Load()
	}
	gates[lead].hold.Store(true)
	t.Cleanup(gates[lead].open) // before the cluster stops (cleanups run last first)
	done := make(chan error, 1)
	go func() {
		_, _, err := c.nodes[lead].Propose(context.Background(), []byte("during the fsync"))
		done <- err
	}()
	waitFor(t, 10*time.Second, "the followers writing the entry while the leader's fsync is held", func() bool {
		for id, g := range gates {
			if id != lead && g.written.Load() == before[id] {
				return false
			}
		}
		return true
	})
	for id := range gates {
		if id == lead {
			continue // its loop is in the held fsync
		}
		if st := c.nodes[id].Status(); st.Leader != lead || st.Term != term {
			t.Fatalf("node %d wrote under leader %d in term %d, want leader %d of term %d", id, st.Leader, st.Term, lead, term)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the proposal was answered before the leader's fsync: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	gates[lead].open()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Propose: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the proposal was not answered after the leader's fsync")
	}
}

// TestMaySendBeforeSave: only a leader that stays leader, in the same term
// with the same vote and without a snapshot, sends before its fsync.
func TestMaySendBeforeSave(t *testing.T) {
	snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: new(uint64(5)), Term: new(uint64(3))}}
	hs := func(term, vote uint64) *raftpb.HardState { return &raftpb.HardState{Term: &term, Vote: &vote} }
	for _, tc := range []struct {
		name string
		role raft.StateType
		rd   raft.Ready
		want bool
	}{
		{"leader, nothing changed", raft.StateLeader, raft.Ready{}, true},
		{"leader, only the commit moved", raft.StateLeader, raft.Ready{HardState: hs(3, 1)}, true},
		{"leader, new term", raft.StateLeader, raft.Ready{HardState: hs(4, 1)}, false},
		{"leader, new vote", raft.StateLeader, raft.Ready{HardState: hs(3, 2)}, false},
		{"leader, role changes", raft.StateLeader, raft.Ready{SoftState: &raft.SoftState{RaftState: raft.StateFollower}}, false},
		{"leader, snapshot", raft.StateLeader, raft.Ready{Snapshot: snap}, false},
		{"follower", raft.StateFollower, raft.Ready{}, false},
		{"candidate", raft.StateCandidate, raft.Ready{}, false},
	} {
		n := &Node{role: tc.role, st: &storage{state: persistedState{Term: 3, Vote: 1}}}
		if got := n.maySendBeforeSave(&tc.rd); got != tc.want {
			t.Errorf("%s: maySendBeforeSave = %v, want %v", tc.name, got, tc.want)
		}
	}
}
