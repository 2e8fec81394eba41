package kproto

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProduceResponseLeaderHint: a v10 response carries a partition's
// CurrentLeader and the NodeEndpoints (KIP-951) as kmsg reads them; v9
// has neither.
func TestProduceResponseLeaderHint(t *testing.T) {
	r := ProduceResponse{Topics: []ProduceTopicResponse{{Topic: "t", Partitions: []ProducePartitionResponse{
		{Partition: 0, ErrorCode: CodeNotLeaderOrFollower, BaseOffset: -1, LogAppendTime: -1, LogStartOffset: -1,
			CurrentLeader: &LeaderHint{LeaderID: 3, LeaderEpoch: 7}},
		{Partition: 1, BaseOffset: 5, LogAppendTime: -1, LogStartOffset: 0},
	}}}, NodeEndpoints: []NodeEndpoint{{NodeID: 3, Host: "h3", Port: 9093}}}
	for _, v := range []int16{9, 10} {
		k := kmsg.NewPtrProduceResponse()
		k.Version = v
		if err := k.ReadFrom(r.AppendTo(nil, v)); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		p0, p1 := k.Topics[0].Partitions[0], k.Topics[0].Partitions[1]
		if p1.BaseOffset != 5 || p0.ErrorCode != int16(CodeNotLeaderOrFollower) {
			t.Fatalf("v%d: %+v", v, k)
		}
		switch v {
		case 9:
			if p0.CurrentLeader.LeaderID != -1 || len(k.Brokers) != 0 {
				t.Fatalf("v9 carries a leader hint: %+v %+v", p0.CurrentLeader, k.Brokers)
			}
		case 10:
			if p0.CurrentLeader.LeaderID != 3 || p0.CurrentLeader.LeaderEpoch != 7 || p1.CurrentLeader.LeaderID != -1 {
				t.Fatalf("v10 leader hints %+v %+v", p0.CurrentLeader, p1.CurrentLeader)
			}
			if len(k.Brokers) != 1 || k.Brokers[0].NodeID != 3 || k.Brokers[0].Host != "h3" || k.Brokers[0].Port != 9093 {
				t.Fatalf("v10 node endpoints %+v", k.Brokers)
			}
		}
	}
}
