package kafkagroups

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestStaticMemberAbsentThroughRebalance: a static member that is down
// when a rebalance starts keeps its place through the join phase and is
// assigned partitions in the new generation (they wait for it), as
// Kafka's onCompleteJoin keeps static members that did not rejoin; a
// dynamic member would be dropped there. Since it does not send SyncGroup
// within the rebalance timeout, it is removed then (Kafka's DelayedSync)
// and the group rebalances without it.
func TestStaticMemberAbsentThroughRebalance(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "absent", 6)
	adm := e.Admin()
	rec := newRecorder()
	// A session well beyond the rebalance timeout: the join phase ends
	// before b's session does, even when c is slow to join. An eager
	// protocol: one rebalance, not cooperative's two.
	opts := []kgo.Opt{kgo.SessionTimeout(20 * time.Second), kgo.RebalanceTimeout(5 * time.Second),
		kgo.Balancers(kgo.RangeBalancer())}
	a := e.startMember("aa", "g-absent", "absent", rec, append(opts, kgo.InstanceID("inst-a"))...)
	b := e.startMember("ab", "g-absent", "absent", rec, append(opts, kgo.InstanceID("inst-b"))...)
	waitStable(t, adm, "g-absent", "absent", 2, 6)
	b.kill() // down, without leaving
	c := e.startMember("ac", "g-absent", "absent", rec, opts...)
	// The join phase waits for b until the rebalance timeout, then
	// completes with b still a member.
	dg := waitStable(t, adm, "g-absent", "absent", 3, 6)
	found := false
	for _, m := range dg.Members {
		if m.InstanceID != nil && *m.InstanceID == "inst-b" {
			found = len(assignments(dg, "absent")[m.ClientID]) > 0
		}
	}
	if !found {
		t.Fatalf("the absent static member has no partitions in the new generation: %+v", dg.Members)
	}
	// It does not sync: the group rebalances without it.
	dg = waitStable(t, adm, "g-absent", "absent", 2, 6)
	for _, m := range dg.Members {
		if m.InstanceID != nil && *m.InstanceID == "inst-b" {
			t.Fatalf("the expired static member is still in the group: %+v", dg.Members)
		}
	}
	a.stop()
	c.stop()
}
