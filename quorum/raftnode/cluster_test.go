package raftnode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func others(all []uint64, not uint64) []uint64 {
	return slices.DeleteFunc(slices.Clone(all), func(id uint64) bool { return id == not })
}

func TestClusterProposeOnFollower(t *testing.T) {
	c := newCluster(t, voters(1, 2, 3), nil)
	lead := c.leader(1, 2, 3)
	follower := others([]uint64{1, 2, 3}, lead)[0]
	for i := range 20 {
		mustPropose(t, c.nodes[follower], fmt.Sprintf("f%d", i))
	}
	_, idx := mustPropose(t, c.nodes[lead], "from-leader")
	st := c.converged(21, 1, 2, 3)
	if st[len(st)-1].Data != "from-leader" || st[len(st)-1].Index != idx {
		t.Fatalf("last entry %+v, want from-leader at %d", st[len(st)-1], idx)
	}
	ls := c.nodes[lead].Status()
	if len(ls.Progress) != 3 || ls.Progress[follower].Match < idx-1 {
		t.Fatalf("leader progress %+v", ls.Progress)
	}
	if fs := c.nodes[follower].Status(); fs.Role != RoleFollower || fs.Progress != nil {
		t.Fatalf("follower status %+v", fs)
	}
}

// TestClusterBatchOnFollower floods a follower with async proposals, which
// its loop hands to raft in batches (one MsgProp each, forwarded whole to
// the leader), with leader-only ones among them, which end a batch: every
// normal proposal commits, in call order, once.
func TestClusterBatchOnFollower(t *testing.T) {
	c := newCluster(t, voters(1, 2, 3), nil)
	lead := c.leader(1, 2, 3)
	follower := others([]uint64{1, 2, 3}, lead)[0]
	const count = 600
	out := make(chan proposeOutcome, count)
	for i := range count {
		done := func(_ any, index uint64, err error) { out <- proposeOutcome{i, index, err} }
		if i%100 == 50 {
			c.nodes[follower].ProposeLeaderFunc([]byte(fmt.Sprint(i)), done)
			continue
		}
		c.nodes[follower].ProposeFunc([]byte(fmt.Sprint(i)), done)
	}
	idx := make([]uint64, 0, count)
	var want []string
	got := map[int]proposeOutcome{}
	for range count {
		r := <-out
		got[r.i] = r
	}
	for i := range count {
		r := got[i]
		if i%100 == 50 {
			if !errors.Is(r.err, ErrNotLeader) {
				t.Fatalf("leader-only proposal %d on a follower: %v", i, r.err)
			}
			continue
		}
		if r.err != nil {
			t.Fatalf("proposal %d: %v", i, r.err)
		}
		idx = append(idx, r.index)
		want = append(want, fmt.Sprint(i))
	}
	for i := 1; i < len(idx); i++ {
		if idx[i] <= idx[i-1] {
			t.Fatalf("entries not in call order: %v", idx)
		}
	}
	if st := datas(c.converged(len(want), 1, 2, 3)); !slices.Equal(st, want) {
		t.Fatalf("applied %v\nwant %v", st, want)
	}
}

func TestClusterReadIndexOnFollower(t *testing.T) {
	c := newCluster(t, voters(1, 2, 3), nil)
	lead := c.leader(1, 2, 3)
	follower := others([]uint64{1, 2, 3}, lead)[0]
	for i := range 10 {
		mustPropose(t, c.nodes[lead], fmt.Sprintf("r%d", i))
	}
	commit := c.nodes[lead].Status().CommitIndex
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.nodes[follower].ReadIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.nodes[follower].AppliedIndex(); got < commit {
		t.Fatalf("after ReadIndex the follower applied %d, leader had committed %d", got, commit)
	}
}

func TestClusterIsolatedLeader(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), nil)
	old := c.leader(all...)
	mustPropose(t, c.nodes[old], "before")
	rest := others(all, old)
	oldApplied := c.nodes[old].AppliedIndex()

	c.net.isolate(old, true)
	// A proposal with plenty of time: its outcome must match what happens.
	type outcome struct {
		idx uint64
		err error
	}
	longRes := make(chan outcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_, idx, err := c.nodes[old].Propose(ctx, []byte("long"))
		longRes <- outcome{idx, err}
	}()
	// The old leader cannot commit while it is cut off.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, _, err := c.nodes[old].Propose(ctx, []byte("lost"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("proposal on the isolated leader: %v", err)
	}

	lead := c.leader(rest...)
	if lead == old {
		t.Fatalf("the isolated node is still the leader")
	}
	for i := range 5 {
		mustPropose(t, c.nodes[rest[i%2]], fmt.Sprintf("new%d", i))
	}
	if got := c.nodes[old].AppliedIndex(); got != oldApplied {
		t.Fatalf("the isolated node applied %d entries meanwhile", got-oldApplied)
	}
	if st := c.nodes[old].Status(); st.Role == RoleLeader {
		t.Fatalf("the isolated node still claims leadership (CheckQuorum): %+v", st)
	}

	c.net.isolate(old, false)
	st := c.converged(6, all...)
	for _, e := range st {
		if e.Data == "lost" {
			t.Fatalf("a proposal that timed out on the isolated leader was applied at %d", e.Index)
		}
	}
	o := <-longRes
	appliedAt := slices.IndexFunc(st, func(e applied) bool { return e.Data == "long" })
	switch {
	case o.err == nil && (appliedAt < 0 || st[appliedAt].Index != o.idx):
		t.Fatalf("Propose(long) succeeded at %d but the entry is not there", o.idx)
	case errors.Is(o.err, ErrProposalDropped) && appliedAt >= 0:
		t.Fatalf("Propose(long) said dropped but it was applied at %d", st[appliedAt].Index)
	case o.err != nil && !errors.Is(o.err, ErrProposalDropped) && !errors.Is(o.err, ErrOutcomeUnknown):
		t.Fatalf("Propose(long): %v", o.err)
	}
	t.Logf("the proposal made on the isolated leader ended with %v", o.err)
}

func TestClusterCatchUpBySnapshot(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), func(cfg *Config) {
		cfg.SnapshotEntries, cfg.SnapshotMargin = 50, 5
		cfg.segmentBytes = 4 << 10
	})
	lead := c.leader(all...)
	lagger := others(all, lead)[0]
	mustPropose(t, c.nodes[lead], "first")
	c.converged(1, all...)
	c.stopNode(lagger)
	laggerApplied := c.nodes[lagger].AppliedIndex()

	for i := range 200 {
		mustPropose(t, c.nodes[lead], fmt.Sprintf("x%d", i))
	}
	waitFor(t, 10*time.Second, "compaction on the leader", func() bool {
		first, _ := c.nodes[lead].st.MemoryStorage.FirstIndex()
		return first > laggerApplied+1
	})

	c.start(lagger)
	c.converged(201, all...)
	if c.sms[lagger].restoreCount() == 0 {
		t.Fatalf("the restarted node caught up without a snapshot")
	}
	snaps, _ := listSnapshots(c.cfgs[lagger].Dir)
	if len(snaps) == 0 || snaps[0] <= laggerApplied {
		t.Fatalf("the restarted node stored no new snapshot: %v", snaps)
	}
	// It keeps following: a new entry reaches it through the log.
	mustPropose(t, c.nodes[lagger], "after-catch-up")
	c.converged(202, all...)
}

func TestClusterLearner(t *testing.T) {
	peers := append(voters(1, 2, 3), Peer{ID: 4, Learner: true})
	c := newCluster(t, peers, nil)
	lead := c.leader(1, 2, 3, 4)
	if lead == 4 {
		t.Fatalf("the learner became leader")
	}
	if st := c.nodes[4].Status(); st.Role != RoleLearner {
		t.Fatalf("learner status %+v", st)
	}
	mustPropose(t, c.nodes[4], "from-learner")
	c.converged(1, 1, 2, 3, 4)
	if !c.nodes[lead].Status().Progress[4].Learner {
		t.Fatalf("leader progress does not mark 4 as a learner")
	}
}
