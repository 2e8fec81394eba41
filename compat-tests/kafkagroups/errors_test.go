package kafkagroups

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func joinReq(version int16, group, member string) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version, r.Group, r.MemberID, r.ProtocolType = version, group, member, "consumer"
	r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 3000, 5000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	r.Protocols = append(r.Protocols, p)
	return r
}

// TestGroupProtocolErrors drives the group APIs with raw requests and
// checks Kafka's error codes.
func TestGroupProtocolErrors(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "errs", 2)
	ctx := ctxT(t)
	c1 := e.Client()
	c2 := e.Client(kgo.MaxVersions(kversion.V2_0_0())) // JoinGroup v3, OffsetFetch v4
	must := func(r kmsg.Response, err error) kmsg.Response {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	// FindCoordinator v4 batches keys; the first creates
	// __consumer_offsets and answers COORDINATOR_NOT_AVAILABLE until its
	// partitions have leaders.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKeys = 4, []string{"a", "b"}
	if r := must(c1.Request(ctx, fc)).(*kmsg.FindCoordinatorResponse); len(r.Coordinators) != 2 || r.Coordinators[1].ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("first find coordinator v4: %+v", r)
	}
	waitFor(t, 30*time.Second, "coordinators of a and b", func() bool {
		r := must(c1.Request(ctx, fc)).(*kmsg.FindCoordinatorResponse)
		return len(r.Coordinators) == 2 && r.Coordinators[0].ErrorCode == 0 && r.Coordinators[1].ErrorCode == 0
	})
	waitCoordinator(t, c1, "g-err")

	// v4+: the first join gets MEMBER_ID_REQUIRED and an id.
	r := must(c1.Request(ctx, joinReq(5, "g-err", ""))).(*kmsg.JoinGroupResponse)
	if r.ErrorCode != kerr.MemberIDRequired.Code || r.MemberID == "" {
		t.Fatalf("first join: %+v", r)
	}
	id1 := r.MemberID
	r = must(c1.Request(ctx, joinReq(5, "g-err", id1))).(*kmsg.JoinGroupResponse)
	if r.ErrorCode != 0 || r.Generation != 1 || r.LeaderID != id1 || len(r.Members) != 1 || *r.Protocol != "range" {
		t.Fatalf("second join: %+v", r)
	}
	// Errors before the group is synced.
	if r := must(c1.Request(ctx, joinReq(5, "g-err", "nobody"))).(*kmsg.JoinGroupResponse); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("join unknown member: %d", r.ErrorCode)
	}
	if r := must(c1.Request(ctx, joinReq(5, "", ""))).(*kmsg.JoinGroupResponse); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("join empty group: %d", r.ErrorCode)
	}
	bad := joinReq(5, "g-err", id1)
	bad.SessionTimeoutMillis = 10
	if r := must(c1.Request(ctx, bad)).(*kmsg.JoinGroupResponse); r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Fatalf("join bad session timeout: %d", r.ErrorCode)
	}
	other := joinReq(5, "g-err", id1)
	other.ProtocolType = "connect"
	if r := must(c1.Request(ctx, other)).(*kmsg.JoinGroupResponse); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("join other protocol type: %d", r.ErrorCode)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "g-err", id1, 7
	if r := must(c1.Request(ctx, sync)).(*kmsg.SyncGroupResponse); r.ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("sync wrong generation: %d", r.ErrorCode)
	}
	sync.Generation = 1
	a := kmsg.NewSyncGroupRequestGroupAssignment()
	a.MemberID, a.MemberAssignment = id1, []byte("mine")
	sync.GroupAssignment = append(sync.GroupAssignment, a)
	if r := must(c1.Request(ctx, sync)).(*kmsg.SyncGroupResponse); r.ErrorCode != 0 || string(r.MemberAssignment) != "mine" {
		t.Fatalf("sync: %+v", r)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "g-err", id1, 1
	if r := must(c1.Request(ctx, hb)).(*kmsg.HeartbeatResponse); r.ErrorCode != 0 {
		t.Fatalf("heartbeat: %d", r.ErrorCode)
	}
	hb2 := *hb
	hb2.MemberID = "nobody"
	if r := must(c1.Request(ctx, &hb2)).(*kmsg.HeartbeatResponse); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat unknown member: %d", r.ErrorCode)
	}
	hb2 = *hb
	hb2.Generation = 0
	if r := must(c1.Request(ctx, &hb2)).(*kmsg.HeartbeatResponse); r.ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("heartbeat old generation: %d", r.ErrorCode)
	}

	// Commits: unknown partition, oversized metadata, wrong generation.
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.MemberID, oc.Generation = "g-err", id1, 1
	for _, tp := range []struct {
		topic string
		part  int32
		meta  string
	}{{"errs", 0, "ok"}, {"errs", 9, ""}, {"nope", 0, ""}, {"errs", 1, strings.Repeat("x", 5000)}} {
		ot := kmsg.NewOffsetCommitRequestTopic()
		ot.Topic = tp.topic
		op := kmsg.NewOffsetCommitRequestTopicPartition()
		op.Partition, op.Offset, op.Metadata = tp.part, 5, kmsg.StringPtr(tp.meta)
		ot.Partitions = append(ot.Partitions, op)
		oc.Topics = append(oc.Topics, ot)
	}
	ocr := must(c1.Request(ctx, oc)).(*kmsg.OffsetCommitResponse)
	want := []int16{0, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.OffsetMetadataTooLarge.Code}
	for i, w := range want {
		if got := ocr.Topics[i].Partitions[0].ErrorCode; got != w {
			t.Fatalf("commit %d: error %d, want %d", i, got, w)
		}
	}
	oc.Generation = 9
	if r := must(c1.Request(ctx, oc)).(*kmsg.OffsetCommitResponse); r.Topics[0].Partitions[0].ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("commit wrong generation: %d", r.Topics[0].Partitions[0].ErrorCode)
	}
	oc.Generation, oc.MemberID = -1, ""
	if r := must(c1.Request(ctx, oc)).(*kmsg.OffsetCommitResponse); r.Topics[0].Partitions[0].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("simple commit into a live group: %d", r.Topics[0].Partitions[0].ErrorCode)
	}

	// A second member joining starts a rebalance: the first member's
	// heartbeat answers REBALANCE_IN_PROGRESS until it rejoins.
	joined := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		jr := joinReq(3, "g-err", "")
		resp, err := c2.Request(context.Background(), jr)
		if err != nil {
			joined <- nil
			return
		}
		joined <- resp.(*kmsg.JoinGroupResponse)
	}()
	waitFor(t, 10*time.Second, "heartbeat says REBALANCE_IN_PROGRESS", func() bool {
		r := must(c1.Request(ctx, hb)).(*kmsg.HeartbeatResponse)
		return r.ErrorCode == kerr.RebalanceInProgress.Code
	})
	r = must(c1.Request(ctx, joinReq(5, "g-err", id1))).(*kmsg.JoinGroupResponse)
	if r.ErrorCode != 0 || r.Generation != 2 || len(r.Members) != 2 {
		t.Fatalf("rejoin: %+v", r)
	}
	var r2 *kmsg.JoinGroupResponse
	select {
	case r2 = <-joined:
	case <-time.After(10 * time.Second):
		t.Fatal("second member's join never answered")
	}
	if r2 == nil || r2.ErrorCode != 0 || r2.Generation != 2 || r2.LeaderID != id1 || len(r2.Members) != 0 {
		t.Fatalf("second member join (v3, no MEMBER_ID_REQUIRED): %+v", r2)
	}

	// LeaveGroup v3+ batches members, each with its own error.
	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Group = "g-err"
	for _, id := range []string{r2.MemberID, "nobody"} {
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = id
		lg.Members = append(lg.Members, m)
	}
	lr := must(c1.Request(ctx, lg)).(*kmsg.LeaveGroupResponse)
	if lr.ErrorCode != 0 || len(lr.Members) != 2 || lr.Members[0].ErrorCode != 0 || lr.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("batched leave: %+v", lr)
	}

	// OffsetFetch v8: several groups in one request.
	of := kmsg.NewPtrOffsetFetchRequest()
	for _, g := range []string{"g-err", "g-none"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		of.Groups = append(of.Groups, rg)
	}
	ofr, err := of.RequestWith(ctx, c1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ofr.Groups) != 2 || ofr.Groups[0].ErrorCode != 0 || len(ofr.Groups[0].Topics) != 1 ||
		ofr.Groups[0].Topics[0].Partitions[0].Offset != 5 || len(ofr.Groups[1].Topics) != 0 {
		t.Fatalf("offset fetch v8: %+v", ofr)
	}
	// v4 (one group) of a partition without a commit: -1, no error.
	of1 := kmsg.NewPtrOffsetFetchRequest()
	of1.Group = "g-err"
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic, ft.Partitions = "errs", []int32{1}
	of1.Topics = append(of1.Topics, ft)
	of1r, err := of1.RequestWith(ctx, c2)
	if err != nil {
		t.Fatal(err)
	}
	if p := of1r.Topics[0].Partitions[0]; p.Offset != -1 || p.ErrorCode != 0 {
		t.Fatalf("offset fetch v1: %+v", p)
	}
}
