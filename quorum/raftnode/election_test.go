package raftnode

import (
	"slices"
	"sync"
	"testing"
	"time"
)

func TestOnPeerGone(t *testing.T) {
	all := []uint64{1, 2, 3}
	five := []uint64{1, 2, 3, 4, 5}
	conn := func(ids ...uint64) func(uint64) bool {
		return func(id uint64) bool { return slices.Contains(ids, id) }
	}
	for _, tc := range []struct {
		name             string
		self, gone, lead uint64
		follower         bool
		voters           []uint64
		connected        func(uint64) bool
		want             goneAction
	}{
		{"the highest follower campaigns", 2, 3, 3, true, all, conn(1), goneCampaign},
		{"a lower follower forgets", 1, 3, 3, true, all, conn(2), goneForget},
		{"the highest is itself when alone", 1, 3, 3, true, all, conn(), goneCampaign},
		{"a dead leader in the middle", 3, 2, 2, true, all, conn(1), goneCampaign},
		{"the lower one, leader in the middle", 1, 2, 2, true, all, conn(3), goneForget},
		{"the highest connected of five", 4, 5, 5, true, five, conn(1, 2, 3), goneCampaign},
		{"a higher one is connected", 3, 5, 5, true, five, conn(1, 2, 4), goneForget},
		{"a higher one is not connected", 3, 5, 5, true, five, conn(1, 2), goneCampaign},
		{"not the leader", 1, 2, 3, true, all, conn(2, 3), goneIgnore},
		{"no leader known, the highest", 2, 3, 0, true, all, conn(1), goneCampaign},
		{"no leader known, a lower one", 1, 3, 0, true, all, conn(2), goneIgnore},
		{"already campaigning", 2, 3, 3, false, all, conn(1), goneIgnore},
		{"a learner", 4, 3, 3, true, all, conn(1, 2), goneIgnore},
		{"nothing gone", 2, 0, 0, true, all, conn(1, 3), goneIgnore},
	} {
		if got := onPeerGone(tc.self, tc.gone, tc.lead, tc.follower, tc.voters, tc.connected); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// goneTicks is the election timeout of the PeerGone cluster tests: 2 s at
// 5 ms ticks (randomized up to 4 s), well above what an early election
// takes on a loaded machine.
const goneTicks = 400

// When the leader's process is gone (PeerGone on the others), the highest
// remaining voter is elected long before an election timeout, and the
// dead leader, restarted at once, gets no hand-over: it took no part.
func TestPeerGoneElectsAtOnce(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), func(cfg *Config) { cfg.ElectionTicks = goneTicks; cfg.HandOver = true })
	c.leader(all...)
	waitFor(t, 30*time.Second, "the hand-over to 3", func() bool { return c.nodes[3].Status().Role == RoleLeader })
	lead := c.leader(all...)
	mustPropose(t, c.nodes[lead], "before")
	c.converged(1, all...)
	rest := others(all, lead)
	c.stopNode(lead)
	killed := time.Now()
	for _, id := range rest {
		c.nodes[id].PeerGone(lead, others(rest, id))
	}
	want := slices.Max(rest)
	waitFor(t, 10*time.Second, "the highest follower elected", func() bool {
		for _, id := range rest {
			if c.nodes[id].Status().Leader != want {
				return false
			}
		}
		return c.nodes[want].Status().Role == RoleLeader
	})
	if took := time.Since(killed); took >= time.Duration(goneTicks)*5*time.Millisecond {
		t.Fatalf("elected %v after the leader went, not before an election timeout", took)
	}
	t.Logf("node %d elected %v after the leader's loss", want, time.Since(killed).Round(time.Millisecond))
	term := c.nodes[want].Status().Term
	mustPropose(t, c.nodes[want], "after")
	c.converged(2, rest...)

	c.start(lead)
	mustPropose(t, c.nodes[want], "back")
	c.converged(3, all...)
	time.Sleep(300 * time.Millisecond) // a hand-over would follow the catch-up at once
	for _, id := range all {
		if st := c.nodes[id].Status(); st.Leader != want || st.Term != term {
			t.Fatalf("node %d: leader %d term %d after the old leader's return, want %d and %d", id, st.Leader, st.Term, want, term)
		}
	}
}

// A proof of death that is wrong, or that only one voter has, moves
// nothing while the leader is alive: the follower that believes it
// campaigns with a pre-vote, which the other follower, still hearing the
// leader, ignores, and the leader's next heartbeat brings it back. A
// forced campaign would have taken a new term.
func TestPeerGoneWrongProofDisruptsNothing(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), func(cfg *Config) { cfg.ElectionTicks = goneTicks })
	lead := c.leader(all...)
	term := c.nodes[lead].Status().Term
	rest := others(all, lead)
	high, low := slices.Max(rest), slices.Min(rest)
	c.nodes[high].PeerGone(lead, []uint64{low})
	c.nodes[low].PeerGone(high, []uint64{lead}) // not the leader: ignored
	for range 20 {                              // over 20 ticks: the campaign's retries included
		mustPropose(t, c.nodes[high], "x")
		time.Sleep(10 * time.Millisecond)
	}
	c.converged(20, all...)
	for _, id := range all {
		if st := c.nodes[id].Status(); st.Leader != lead || st.Term != term {
			t.Fatalf("node %d: leader %d term %d, want %d and %d", id, st.Leader, st.Term, lead, term)
		}
	}
}

// The campaigner may learn of the loss before the other voter, which then
// ignores its pre-vote (it still holds the leader's lease): the campaign
// is retried, and succeeds as soon as the other one knows, not after the
// lease.
func TestPeerGoneCampaignRetriesUntilTheOthersKnow(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), func(cfg *Config) { cfg.ElectionTicks = goneTicks })
	lead := c.leader(all...)
	rest := others(all, lead)
	high, low := slices.Max(rest), slices.Min(rest)
	c.stopNode(lead)
	gone := time.Now()
	c.nodes[high].PeerGone(lead, []uint64{low})
	time.Sleep(100 * time.Millisecond)
	if st := c.nodes[high].Status(); st.Role == RoleLeader {
		t.Fatalf("node %d elected before the other voter forgot the leader", high)
	}
	c.nodes[low].PeerGone(lead, []uint64{high})
	waitFor(t, 10*time.Second, "the highest follower elected", func() bool {
		return c.nodes[high].Status().Role == RoleLeader && c.nodes[low].Status().Leader == high
	})
	if took := time.Since(gone); took >= time.Duration(goneTicks)*5*time.Millisecond {
		t.Fatalf("elected %v after the leader went, not before an election timeout", took)
	}
	t.Logf("elected %v after the leader's loss", time.Since(gone).Round(time.Millisecond))
}

// When the highest follower's log is behind the other's (the dead leader
// had reached only the other), its campaign cannot win: the other, which
// refuses its pre-vote, campaigns itself, and is elected at once.
func TestPeerGoneBackUpWhenTheCampaignerIsBehind(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), func(cfg *Config) { cfg.ElectionTicks = goneTicks })
	lead := c.leader(all...)
	rest := others(all, lead)
	high, low := slices.Max(rest), slices.Min(rest)
	mustPropose(t, c.nodes[lead], "all")
	c.converged(1, all...)
	c.net.isolate(high, true)
	mustPropose(t, c.nodes[lead], "not on the highest")
	c.converged(2, lead, low)
	c.stopNode(lead)
	c.net.isolate(high, false)
	gone := time.Now()
	c.nodes[high].PeerGone(lead, []uint64{low})
	c.nodes[low].PeerGone(lead, []uint64{high})
	waitFor(t, 10*time.Second, "the follower with the longer log elected", func() bool {
		return c.nodes[low].Status().Role == RoleLeader && c.nodes[high].Status().Leader == low
	})
	if took := time.Since(gone); took >= time.Duration(goneTicks)*5*time.Millisecond {
		t.Fatalf("elected %v after the leader went, not before an election timeout", took)
	}
	t.Logf("elected %v after the leader's loss", time.Since(gone).Round(time.Millisecond))
	mustPropose(t, c.nodes[high], "after")
	c.converged(3, rest...)
}

func TestLogBehind(t *testing.T) {
	for _, tc := range []struct {
		term, index, ourTerm, ourIndex uint64
		want                           bool
	}{
		{2, 10, 2, 10, false},
		{2, 9, 2, 10, true},
		{2, 11, 2, 10, false},
		{1, 20, 2, 10, true},
		{3, 1, 2, 10, false},
	} {
		if got := logBehind(tc.term, tc.index, tc.ourTerm, tc.ourIndex); got != tc.want {
			t.Errorf("logBehind(%d, %d, %d, %d) = %v", tc.term, tc.index, tc.ourTerm, tc.ourIndex, got)
		}
	}
}

// A leader-only proposal (ProposeLeaderFunc) is appended by the leader,
// and refused on a follower, never forwarded to the leader: a deposed
// leader's stale decision must not be committed by the new one.
func TestProposeLeaderFuncOnlyOnTheLeader(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), nil)
	lead := c.leader(all...)
	follower := others(all, lead)[0]
	outcome := func(id uint64, data string) error {
		done := make(chan error, 1)
		c.nodes[id].ProposeLeaderFunc([]byte(data), func(_ any, _ uint64, err error) { done <- err })
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatalf("node %d: no outcome for %q", id, data)
			return nil
		}
	}
	if err := outcome(follower, "stale"); err != ErrNotLeader {
		t.Fatalf("on follower %d: %v, want ErrNotLeader", follower, err)
	}
	if err := outcome(lead, "leading"); err != nil {
		t.Fatalf("on leader %d: %v", lead, err)
	}
	mustPropose(t, c.nodes[follower], "after")
	got := datas(c.converged(2, all...))
	if want := []string{"leading", "after"}; !slices.Equal(got, want) {
		t.Fatalf("applied %q, want %q", got, want)
	}
}

// gatedSM is a testSM whose Apply of the entry gate blocks, and the node's
// loop with it (as a slow disk or a loaded machine would), until open is
// closed; entered is closed when it blocks.
type gatedSM struct {
	*testSM
	gate    string
	entered chan struct{}
	open    chan struct{}
}

func newGatedSM(gate string) *gatedSM {
	return &gatedSM{testSM: &testSM{}, gate: gate, entered: make(chan struct{}), open: make(chan struct{})}
}

func (s *gatedSM) Apply(index uint64, data []byte) any {
	if string(data) == s.gate {
		close(s.entered)
		<-s.open
	}
	return s.testSM.Apply(index, data)
}

// A follower restarted behind the leader is still catching up when the
// leader's process goes: the leader's last appends and heartbeats wait on
// its busy loop when the proof of the leader's death comes. Stepped after
// it forgot the leader, they would make it follow the dead leader again,
// and ignore the campaigner's pre-votes for the lease they renew (an
// election timeout): they are stepped first, and the other voter is
// elected at once.
func TestPeerGoneWhileARestartedFollowerCatchesUp(t *testing.T) {
	all := []uint64{1, 2, 3}
	c := newCluster(t, voters(all...), func(cfg *Config) { cfg.ElectionTicks = goneTicks })
	lead := c.leader(all...)
	rest := others(all, lead)
	high, low := slices.Max(rest), slices.Min(rest)
	mustPropose(t, c.nodes[lead], "before")
	c.converged(1, all...)
	c.stopNode(low)
	mustPropose(t, c.nodes[lead], "gate")
	mustPropose(t, c.nodes[lead], "behind")
	sm := newGatedSM("gate")
	var once sync.Once
	release := func() { once.Do(func() { close(sm.open) }) }
	t.Cleanup(release) // before the cluster's Stop, which waits for the loop
	n := mustStart(t, c.cfgs[low], sm)
	c.nodes[low], c.sms[low] = n, sm.testSM
	c.net.setNode(low, n)
	select {
	case <-sm.entered:
	case <-time.After(10 * time.Second):
		t.Fatalf("restarted node %d did not catch up to the gate entry", low)
	}
	waitFor(t, 10*time.Second, "the leader's messages queued on the busy follower", func() bool { return len(n.recvc) >= 20 })
	c.stopNode(lead)
	c.net.flush(low) // the dead leader's messages are all with the node, as the Transport's are before PeerGone
	gone := time.Now()
	c.nodes[high].PeerGone(lead, []uint64{low})
	n.PeerGone(lead, []uint64{high})
	release()
	waitFor(t, 10*time.Second, "the highest follower elected", func() bool {
		return c.nodes[high].Status().Role == RoleLeader && n.Status().Leader == high
	})
	if took := time.Since(gone); took >= time.Duration(goneTicks)*5*time.Millisecond {
		t.Fatalf("elected %v after the leader went, not before an election timeout", took)
	}
	t.Logf("elected %v after the leader's loss", time.Since(gone).Round(time.Millisecond))
	mustPropose(t, c.nodes[high], "after")
	c.converged(4, rest...)
}
