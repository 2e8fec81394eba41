package kafkago

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestClusterCoordinatorAndEpochAPIs(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "epochs", 1)
	produceSync(t, e.Client(), recordTo("epochs", 0, "a"), recordTo("epochs", 0, "b"))
	c := dialRaw(t, e.Addr)

	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.Version = 1
	dc.EndpointType = 1
	dr := c.roundTrip(dc).(*kmsg.DescribeClusterResponse)
	if dr.ErrorCode != 0 || dr.ControllerID != 0 || len(dr.Brokers) != 1 || dr.ClusterID == "" {
		t.Fatalf("DescribeCluster: %+v", dr)
	}

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version = 4
	fc.CoordinatorKeys = []string{"group-a", "group-b"}
	// The first creates __consumer_offsets: COORDINATOR_NOT_AVAILABLE
	// until its partitions have a leader, as Kafka.
	fr := c.roundTrip(fc).(*kmsg.FindCoordinatorResponse)
	if len(fr.Coordinators) != 2 || fr.Coordinators[0].ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("first FindCoordinator v4: %+v", fr)
	}
	for deadline := time.Now().Add(30 * time.Second); fr.Coordinators[0].ErrorCode != 0 || fr.Coordinators[1].ErrorCode != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("FindCoordinator v4: %+v", fr)
		}
		fr = c.roundTrip(fc).(*kmsg.FindCoordinatorResponse)
	}
	if fr.Coordinators[0].NodeID != 0 || fr.Coordinators[1].NodeID != 0 {
		t.Fatalf("FindCoordinator v4: %+v", fr)
	}
	fc.Version, fc.CoordinatorKey = 0, "group-a"
	if fr := c.roundTrip(fc).(*kmsg.FindCoordinatorResponse); fr.ErrorCode != 0 || fr.NodeID != 0 || fr.Port == 0 {
		t.Fatalf("FindCoordinator v0: %+v", fr)
	}

	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oe.Version, oe.ReplicaID = 4, -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "epochs"
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = 0, 0, 0
	rt.Partitions = append(rt.Partitions, rp)
	oe.Topics = append(oe.Topics, rt)
	or := c.roundTrip(oe).(*kmsg.OffsetForLeaderEpochResponse)
	if p := or.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.EndOffset != 2 || p.LeaderEpoch != 0 {
		t.Fatalf("OffsetForLeaderEpoch: %+v", p)
	}

	// The group coordinator checks the session timeout first
	// (compat-tests/kafkagroups covers the rest).
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version, jg.Group, jg.ProtocolType = 5, "g", "consumer"
	if r := c.roundTrip(jg).(*kmsg.JoinGroupResponse); r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Fatalf("JoinGroup: %d", r.ErrorCode)
	}
}
