package kafkagroups

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestStaticMembership: a static member that restarts with its
// group.instance.id takes its old place without a rebalance, and the
// old member id is fenced.
func TestStaticMembership(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "static", 4)
	adm := e.Admin()
	rec := newRecorder()
	a := e.startMember("sa", "g-static", "static", rec, kgo.InstanceID("inst-a"))
	b := e.startMember("sb", "g-static", "static", rec, kgo.InstanceID("inst-b"))
	waitStable(t, adm, "g-static", "static", 2, 4)
	oldID, gen := a.cl.GroupMetadata()
	waitFor(t, 10*time.Second, "generation settled", func() bool {
		id, g := a.cl.GroupMetadata()
		_, gb := b.cl.GroupMetadata()
		oldID, gen = id, g
		return g > 0 && g == gb
	})
	a.stop() // a static member does not leave on close
	dg := waitStable(t, adm, "g-static", "static", 2, 4)
	a2 := e.startMember("sa2", "g-static", "static", rec, kgo.InstanceID("inst-a"))
	waitFor(t, 10*time.Second, "restarted static member in the group", func() bool {
		id, g := a2.cl.GroupMetadata()
		return id != "" && id != oldID && g > 0
	})
	if _, g := a2.cl.GroupMetadata(); g != gen {
		t.Fatalf("static rejoin moved the generation %d → %d (a rebalance)", gen, g)
	}
	dg = waitStable(t, adm, "g-static", "static", 2, 4)
	for _, m := range dg.Members {
		if m.MemberID == oldID {
			t.Fatal("old member id still in the group")
		}
		if m.InstanceID == nil || !strings.HasPrefix(*m.InstanceID, "inst-") {
			t.Fatalf("member without instance id: %+v", m)
		}
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation, hb.InstanceID = "g-static", oldID, gen, kmsg.StringPtr("inst-a")
	resp, err := hb.RequestWith(ctxT(t), e.Client())
	if err != nil || resp.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("heartbeat of the replaced member: %v %v", resp, err)
	}
	// A static member leaves by instance id.
	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Group = "g-static"
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.InstanceID = kmsg.StringPtr("inst-b")
	lg.Members = append(lg.Members, lm)
	lresp, err := lg.RequestWith(ctxT(t), e.Client())
	if err != nil || lresp.ErrorCode != 0 || len(lresp.Members) != 1 || lresp.Members[0].ErrorCode != 0 {
		t.Fatalf("leave by instance id: %+v %v", lresp, err)
	}
	b.kill()
	waitStable(t, adm, "g-static", "static", 1, 4)
	a2.stop()
}

// TestAdminGroups: kadm list, describe, commit, fetch and delete of
// groups and offsets, with Kafka's errors.
func TestAdminGroups(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "adm", 3)
	adm := e.Admin()
	ctx := ctxT(t)
	os := kadm.Offsets{}
	for p := int32(0); p < 3; p++ {
		os.Add(kadm.Offset{Topic: "adm", Partition: p, At: int64(10 + p), LeaderEpoch: -1})
	}
	if err := adm.CommitAllOffsets(ctx, "g-simple", os); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	m := e.startMember("am", "g-active", "adm", rec)
	waitStable(t, adm, "g-active", "adm", 1, 3)

	lg, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := lg["g-simple"]; !ok || g.State != "Empty" {
		t.Fatalf("list: %+v", lg)
	}
	if g, ok := lg["g-active"]; !ok || g.State != "Stable" || g.ProtocolType != "consumer" {
		t.Fatalf("list: %+v", lg)
	}
	if only, _ := adm.ListGroups(ctx, "Stable"); len(only) != 1 {
		t.Fatalf("list Stable: %+v", only)
	}
	dg, err := adm.DescribeGroups(ctx, "g-active", "g-missing")
	if err != nil {
		t.Fatal(err)
	}
	if d := dg["g-active"]; d.State != "Stable" || len(d.Members) != 1 || d.Members[0].ClientID != "am" ||
		!strings.HasPrefix(d.Members[0].ClientHost, "/127.0.0.1") {
		t.Fatalf("describe: %+v", d)
	}
	if d := dg["g-missing"]; d.State != "Dead" || d.Err != nil {
		t.Fatalf("describe missing: %+v", d)
	}
	offs, err := adm.FetchOffsets(ctx, "g-simple")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("adm", 2); o.At != 12 {
		t.Fatalf("fetch: %+v", o)
	}
	many := adm.FetchManyOffsets(ctx, "g-simple", "g-missing")
	if r := many["g-simple"]; r.Err != nil || len(r.Fetched) != 1 {
		t.Fatalf("fetch many: %+v", many)
	}
	// Deleting offsets of a topic the active group subscribes to fails.
	dr, err := adm.DeleteOffsets(ctx, "g-active", kadm.TopicsSet{"adm": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := dr.Error(); !errors.Is(err, kerr.GroupSubscribedToTopic) {
		t.Fatalf("delete offsets of a subscribed topic: %v", err)
	}
	dr, err = adm.DeleteOffsets(ctx, "g-simple", kadm.TopicsSet{"adm": {0: {}}})
	if err != nil || dr.Error() != nil {
		t.Fatalf("delete offsets: %v %v", err, dr.Error())
	}
	offs, _ = adm.FetchOffsets(ctx, "g-simple")
	if o, ok := offs.Lookup("adm", 0); ok && o.At >= 0 {
		t.Fatalf("offset still there after delete: %+v", o)
	}
	del, err := adm.DeleteGroups(ctx, "g-active", "g-simple", "g-missing")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(del["g-active"].Err, kerr.NonEmptyGroup) || del["g-simple"].Err != nil ||
		!errors.Is(del["g-missing"].Err, kerr.GroupIDNotFound) {
		t.Fatalf("delete groups: %+v", del)
	}
	if ok, _, _ := e.ZK().Exists(e.Path("/consumers/g-simple")); ok {
		t.Fatal("/consumers/g-simple left after DeleteGroups")
	}
	m.stop()
	waitFor(t, 10*time.Second, "active group empty", func() bool {
		dg, _ := adm.DescribeGroups(context.Background(), "g-active")
		return dg["g-active"].State == "Empty"
	})
	if del, _ := adm.DeleteGroups(ctx, "g-active"); del["g-active"].Err != nil {
		t.Fatalf("delete emptied group: %v", del["g-active"].Err)
	}
}
