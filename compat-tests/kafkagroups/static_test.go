package kafkagroups

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestStaticMemberAbsentThroughRebalance: a static member that is down
// when a rebalance starts keeps its place (and is assigned partitions,
// which wait for it) until its session ends, as Kafka's onCompleteJoin
// keeps static members that did not rejoin; then the group rebalances
// without it. A dynamic member would be dropped at the join phase's end.
func TestStaticMemberAbsentThroughRebalance(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "absent", 6)
	adm := e.Admin()
	rec := newRecorder()
	// A session longer than the rebalance timeout: the join phase ends
	// before b's session does.
	session, rebalance := kgo.SessionTimeout(5*time.Second), kgo.RebalanceTimeout(3*time.Second)
	a := e.startMember("aa", "g-absent", "absent", rec, kgo.InstanceID("inst-a"), session, rebalance)
	b := e.startMember("ab", "g-absent", "absent", rec, kgo.InstanceID("inst-b"), session, rebalance)
	waitStable(t, adm, "g-absent", "absent", 2, 6)
	b.kill() // down, without leaving
	c := e.startMember("ac", "g-absent", "absent", rec, session, rebalance)
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
	// Its session ends: the group rebalances without it.
	dg = waitStable(t, adm, "g-absent", "absent", 2, 6)
	for _, m := range dg.Members {
		if m.InstanceID != nil && *m.InstanceID == "inst-b" {
			t.Fatalf("the expired static member is still in the group: %+v", dg.Members)
		}
	}
	a.stop()
	c.stop()
}
