package raftnode

import (
	"testing"
	"time"
)

// memFirst is the first index the MemoryStorage of n holds (it has its own
// lock, so a test may read it while the loop runs).
func memFirst(n *Node) uint64 {
	first, _ := n.st.MemoryStorage.FirstIndex()
	return first
}

// A single voter keeps only a tail of its applied entries in memory, with
// no snapshot taken, and a restart still replays every entry from the log.
func TestMemoryTailTrimmed(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(1, dir)
	cfg.SnapshotEntries, cfg.memTail = 1000000, 16
	sm := &testSM{}
	n := mustStart(t, cfg, sm)
	want := proposeMany(t, n, "m", 4, 100)
	waitFor(t, 10*time.Second, "the memory trimmed", func() bool { return memFirst(n) > 300 })
	if held := n.AppliedIndex() + 1 - memFirst(n); held > 2*cfg.memTail+1 {
		t.Fatalf("memory holds %d applied entries, want at most %d", held, 2*cfg.memTail+1)
	}
	if snaps, _ := listSnapshots(dir); len(snaps) != 0 {
		t.Fatalf("snapshots were taken: %v", snaps)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	sm2 := &testSM{}
	n2 := mustStart(t, cfg, sm2)
	defer n2.Stop()
	mustPropose(t, n2, "after")
	checkApplied(t, sm2, want)
}

// A follower that was down catches up from entries the leader no longer
// holds in memory: they are read back from its log (Entries, Term), not
// sent as a snapshot.
func TestClusterCatchUpFromTrimmedLog(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), func(cfg *Config) {
		cfg.SnapshotEntries, cfg.memTail = 1000000, 8
	})
	lead := c.leader(all...)
	lagger := others(all, lead)[0]
	mustPropose(t, c.nodes[lead], "first")
	c.converged(1, all...)
	c.stopNode(lagger)
	laggerApplied := c.nodes[lagger].AppliedIndex()
	for i := range 200 {
		mustPropose(t, c.nodes[lead], "x"+string(rune('a'+i%26)))
	}
	waitFor(t, 10*time.Second, "the leader's memory trimmed", func() bool {
		return memFirst(c.nodes[lead]) > laggerApplied+50
	})
	c.start(lagger)
	c.converged(201, all...)
	if n := c.sms[lagger].restoreCount(); n != 0 {
		t.Fatalf("the follower caught up with %d snapshots, want the log", n)
	}
}
