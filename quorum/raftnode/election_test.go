package raftnode

import (
	"slices"
	"testing"
	"time"
)

// When the leader's connection closes (PeerClosed), the highest-id
// follower is elected at once: here well within the election timeout
// (1.5 s at least), which is all raft alone could do.
func TestLeaderClosedElectsAtOnce(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), func(cfg *Config) { cfg.ElectionTicks = 300 }) // 5 ms ticks
	lead := c.leader(all...)
	mustPropose(t, c.nodes[lead], "before")
	c.converged(1, all...)
	rest := others(all, lead)
	c.stopNode(lead)
	for _, id := range rest {
		c.nodes[id].PeerClosed(lead)
	}
	want := slices.Max(rest)
	waitFor(t, time.Second, "the highest follower elected", func() bool {
		for _, id := range rest {
			if c.nodes[id].Status().Leader != want {
				return false
			}
		}
		return c.nodes[want].Status().Role == RoleLeader
	})
	mustPropose(t, c.nodes[want], "after")
	c.converged(2, rest...)
}

// A follower that hears of another peer closing (not the leader) changes
// nothing.
func TestPeerClosedNotLeader(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), func(cfg *Config) { cfg.ElectionTicks = 300 })
	lead := c.leader(all...)
	term := c.nodes[lead].Status().Term
	rest := others(all, lead)
	c.nodes[rest[0]].PeerClosed(rest[1])
	c.nodes[rest[1]].PeerClosed(rest[0])
	mustPropose(t, c.nodes[lead], "x")
	c.converged(1, all...)
	for _, id := range all {
		if st := c.nodes[id].Status(); st.Leader != lead || st.Term != term {
			t.Fatalf("node %d: leader %d term %d, want %d and %d", id, st.Leader, st.Term, lead, term)
		}
	}
}
