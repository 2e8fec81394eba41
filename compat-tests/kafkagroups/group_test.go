package kafkagroups

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGroupMembershipChanges: three consumers share a 6-partition topic
// and read every record once; a fourth joins, one leaves cleanly, one is
// killed and expires by session timeout. After each change the group is
// Stable again, new records are read exactly once, and no partition was
// ever read by two members within one generation.
func TestGroupMembershipChanges(t *testing.T) {
	e := startBroker(t)
	const topic, group, parts = "members", "g-members", 6
	createTopic(t, e, topic, parts)
	adm := e.Admin()
	rec := newRecorder()
	opts := []kgo.Opt{kgo.Balancers(kgo.RangeBalancer())}
	m1 := e.startMember("m1", group, topic, rec, opts...)
	m2 := e.startMember("m2", group, topic, rec, opts...)
	m3 := e.startMember("m3", group, topic, rec, opts...)
	waitStable(t, adm, group, topic, 3, parts)

	step := func(prefix string, members int) {
		t.Helper()
		waitStable(t, adm, group, topic, members, parts)
		produce(t, e, topic, prefix, 600, parts)
		waitFor(t, 20*time.Second, "all "+prefix+" records read", func() bool { return rec.count(prefix+"-") >= 600 })
		rec.checkExactlyOnce(t, prefix, 600)
	}
	step("a", 3)

	m4 := e.startMember("m4", group, topic, rec, opts...)
	step("b", 4)

	m1.stop() // LeaveGroup
	step("c", 3)

	start := time.Now()
	m2.kill() // no LeaveGroup: the 1.5 s session must expire
	step("d", 2)
	if d := time.Since(start); d < time.Second {
		t.Fatalf("killed member removed after %v, before its session timeout", d)
	}
	rec.checkGenerations(t)
	m3.stop()
	m4.stop()
}

// TestRangeAndCooperativeSticky: the range assignor splits partitions
// into contiguous ranges; cooperative-sticky moves only what it must
// when a member joins.
func TestRangeAndCooperativeSticky(t *testing.T) {
	e := startBroker(t)
	const parts = 6
	createTopic(t, e, "assign", parts)
	adm := e.Admin()

	t.Run("range", func(t *testing.T) {
		rec := newRecorder()
		o := kgo.Balancers(kgo.RangeBalancer())
		a := e.startMember("ra", "g-range", "assign", rec, o)
		b := e.startMember("rb", "g-range", "assign", rec, o)
		dg := waitStable(t, adm, "g-range", "assign", 2, parts)
		if dg.Protocol != "range" || dg.ProtocolType != "consumer" {
			t.Fatalf("protocol %q/%q", dg.ProtocolType, dg.Protocol)
		}
		got := assignments(dg, "assign")
		lo, hi := []int32{0, 1, 2}, []int32{3, 4, 5}
		if !(slices.Equal(got["ra"], lo) && slices.Equal(got["rb"], hi) || slices.Equal(got["ra"], hi) && slices.Equal(got["rb"], lo)) {
			t.Fatalf("range assignment %v", got)
		}
		a.stop()
		b.stop()
	})

	t.Run("cooperative-sticky", func(t *testing.T) {
		rec := newRecorder()
		o := kgo.Balancers(kgo.CooperativeStickyBalancer())
		a := e.startMember("ca", "g-coop", "assign", rec, o)
		b := e.startMember("cb", "g-coop", "assign", rec, o)
		dg := waitStable(t, adm, "g-coop", "assign", 2, parts)
		if dg.Protocol != "cooperative-sticky" {
			t.Fatalf("protocol %q", dg.Protocol)
		}
		before := assignments(dg, "assign")
		produce(t, e, "assign", "x", 300, parts)
		waitFor(t, 20*time.Second, "x read", func() bool { return rec.count("x-") >= 300 })
		c := e.startMember("cc", "g-coop", "assign", rec, o)
		after := assignments(waitStable(t, adm, "g-coop", "assign", 3, parts), "assign")
		for _, m := range []string{"ca", "cb"} {
			if len(after[m]) != 2 {
				t.Fatalf("after join: %v", after)
			}
			for _, p := range after[m] {
				if !slices.Contains(before[m], p) {
					t.Fatalf("sticky: %s got partition %d it did not own (before %v, after %v)", m, p, before, after)
				}
			}
		}
		produce(t, e, "assign", "y", 300, parts)
		waitFor(t, 20*time.Second, "y read", func() bool { return rec.count("y-") >= 300 })
		rec.checkExactlyOnce(t, "x", 300)
		rec.checkExactlyOnce(t, "y", 300)
		rec.checkGenerations(t)
		a.stop()
		b.stop()
		c.stop()
	})
}
