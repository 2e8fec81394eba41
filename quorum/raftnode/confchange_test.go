package raftnode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// join starts node id, not yet a member, on a fresh directory: it
// bootstraps with the group's current voters and itself as a learner, and
// waits for the leader to add it (ProposeConfChange).
func (c *cluster) join(id uint64, current []uint64) {
	cfg := testConfig(id, c.t.TempDir())
	cfg.Peers = append(voters(current...), Peer{ID: id, Learner: true})
	cfg.Transport = c.net.transport(id)
	c.cfgs[id] = cfg
	c.start(id)
}

func change(typ raftpb.ConfChangeType, ids ...uint64) *raftpb.ConfChangeV2 {
	cc := &raftpb.ConfChangeV2{}
	for _, id := range ids {
		cc.Changes = append(cc.Changes, &raftpb.ConfChangeSingle{Type: typ.Enum(), NodeId: &id})
	}
	return cc
}

func mustConfChange(t *testing.T, n *Node, cc *raftpb.ConfChangeV2, data string) (any, uint64) {
	t.Helper()
	var res any
	var idx uint64
	// A new leader refuses changes until it has applied its log, and raft
	// leaves a joint configuration a moment after entering it: retry
	// while the change is refused.
	waitFor(t, 10*time.Second, "the conf change to be taken", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		res, idx, err = n.ProposeConfChange(ctx, cc, []byte(data))
		if errors.Is(err, ErrConfChangePending) {
			return false
		}
		if err != nil {
			t.Fatalf("ProposeConfChange(%v) on %d: %v", cc, n.id, err)
		}
		return true
	})
	return res, idx
}

// membership waits until node id applied a configuration of these voters
// and learners, out of any joint configuration.
func (c *cluster) membership(id uint64, voters, learners []uint64) {
	c.t.Helper()
	waitFor(c.t, 10*time.Second, fmt.Sprintf("node %d: voters %v learners %v", id, voters, learners), func() bool {
		st := c.nodes[id].Status()
		return slices.Equal(st.Voters, voters) && slices.Equal(st.Learners, learners) && len(st.Outgoing) == 0
	})
}

// TestConfChangeGrowShrinkDemote grows a group of three to five (two voters
// at once: joint consensus) and back, and makes a voter a learner and a
// voter again, under writes; the data of each change is applied at the
// change's own index on every node, and all state machines agree.
func TestConfChangeGrowShrinkDemote(t *testing.T) {
	c := newClusterSpare(t, voters(1, 2, 3), []uint64{4, 5}, nil)
	lead := c.leader(1, 2, 3)
	mustPropose(t, c.nodes[lead], "before")
	c.join(4, []uint64{1, 2, 3})
	c.join(5, []uint64{1, 2, 3})

	_, idx := mustConfChange(t, c.nodes[lead], change(raftpb.ConfChangeType_ConfChangeAddNode, 4, 5), "add 4 5")
	for _, id := range []uint64{1, 2, 3, 4, 5} {
		c.membership(id, []uint64{1, 2, 3, 4, 5}, nil)
	}
	for i := range 10 {
		mustPropose(t, c.nodes[uint64(1+i%5)], fmt.Sprintf("five-%d", i))
	}
	st := c.converged(12, 1, 2, 3, 4, 5)
	if !slices.Contains(st, applied{idx, "add 4 5"}) {
		t.Fatalf("the change's data is not applied at its index %d: %v", idx, st)
	}

	lead = c.leader(1, 2, 3, 4, 5)
	mustConfChange(t, c.nodes[lead], change(raftpb.ConfChangeType_ConfChangeRemoveNode, 4, 5), "remove 4 5")
	for _, id := range []uint64{1, 2, 3} {
		c.membership(id, []uint64{1, 2, 3}, nil)
	}
	lead = c.leader(1, 2, 3)
	follower := others([]uint64{1, 2, 3}, lead)[0]
	mustConfChange(t, c.nodes[lead], change(raftpb.ConfChangeType_ConfChangeAddLearnerNode, follower), "demote")
	c.membership(lead, others([]uint64{1, 2, 3}, follower), []uint64{follower})
	waitFor(t, 10*time.Second, "a learner role", func() bool { return c.nodes[follower].Status().Role == RoleLearner })
	mustPropose(t, c.nodes[follower], "from the learner")
	lead = c.leader(1, 2, 3)
	mustConfChange(t, c.nodes[lead], change(raftpb.ConfChangeType_ConfChangeAddNode, follower), "promote")
	for _, id := range []uint64{1, 2, 3} {
		c.membership(id, []uint64{1, 2, 3}, nil)
	}
	mustPropose(t, c.nodes[follower], "after")
	final := c.converged(17, 1, 2, 3)
	if got := datas(final); got[len(got)-1] != "after" {
		t.Fatalf("applied %v", got)
	}
	// A restarted member replays the changes from its log.
	c.stopNode(4)
	c.stopNode(follower)
	c.start(follower)
	c.membership(follower, []uint64{1, 2, 3}, nil)
	c.converged(17, 1, 2, 3)
}

// TestConfChangeRefusedWhilePending: a second change while the first is
// not applied yet is refused with ErrConfChangePending and applies nothing.
func TestConfChangeRefusedWhilePending(t *testing.T) {
	// A long election timeout: the leader, cut off from both followers,
	// stays leader (CheckQuorum) long enough for the second proposal.
	c := newCluster(t, voters(1, 2, 3), func(cfg *Config) { cfg.ElectionTicks = 400 })
	lead := c.leader(1, 2, 3)
	mustPropose(t, c.nodes[lead], "x")
	for _, id := range others([]uint64{1, 2, 3}, lead) {
		c.net.isolate(id, true)
	}
	// The first change cannot commit: it stays pending.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, _, err := c.nodes[lead].ProposeConfChange(ctx, change(raftpb.ConfChangeType_ConfChangeAddLearnerNode, 4), []byte("add"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first change: %v, want a deadline (it cannot commit)", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err = c.nodes[lead].ProposeConfChange(ctx, change(raftpb.ConfChangeType_ConfChangeRemoveNode, 3), []byte("remove"))
	if !errors.Is(err, ErrConfChangePending) {
		t.Fatalf("second change: %v, want ErrConfChangePending", err)
	}
	for _, e := range c.sms[lead].state() {
		if e.Data == "remove" {
			t.Fatal("a refused change was applied")
		}
	}
}
