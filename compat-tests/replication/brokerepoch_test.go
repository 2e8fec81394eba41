package replication

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestAlterPartitionStaleBrokerEpoch: the controller takes a leader's
// AlterPartition only with the broker epoch of its live registration (the
// czxid of /brokers/ids/{id}): an older epoch — a leader that lost its
// session and has not registered again — gets STALE_BROKER_EPOCH and
// the state znode stays; the registration's own epoch is answered (here
// with the ISR it already has). That the leaders send their own epochs
// is TestAlterPartitionCarriesBrokerEpoch (package broker), and every ISR
// change test here (they would be refused otherwise).
func TestAlterPartitionStaleBrokerEpoch(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(time.Second))
	createTopic(t, cl, "epochs", 1, 3, nil)
	z := cl.Brokers[0].ZK()
	st := waitState(t, cl, z, "epochs", 0, "all in the ISR", isrIs(1, 2, 3))
	leader := leaderOf(t, cl, "epochs", 0)
	_, reg, err := z.Get(cl.Brokers[0].Path(fmt.Sprintf("/brokers/ids/%d", leader)))
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := z.Get(cl.Brokers[0].Path("/controller"))
	if err != nil {
		t.Fatal(err)
	}
	var ctrl struct {
		BrokerID int32 `json:"brokerid"`
	}
	if err := json.Unmarshal(data, &ctrl); err != nil {
		t.Fatal(err)
	}
	_, state, err := z.Get(cl.Brokers[0].Path("/brokers/topics/epochs/partitions/0/state"))
	if err != nil {
		t.Fatal(err)
	}
	kc := cl.Broker(ctrl.BrokerID).Client(kgo.SeedBrokers(cl.Broker(ctrl.BrokerID).Addr))
	td, err := kadmClient(kc).ListTopics(ctxT(t), "epochs")
	if err != nil {
		t.Fatal(err)
	}
	id := td["epochs"].ID
	alter := func(epoch int64, isr []int32) *kmsg.AlterPartitionResponse {
		t.Helper()
		req := kmsg.NewPtrAlterPartitionRequest()
		req.BrokerID, req.BrokerEpoch = leader, epoch
		rt := kmsg.NewAlterPartitionRequestTopic()
		rt.Topic, rt.TopicID = "epochs", id
		rp := kmsg.NewAlterPartitionRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch, rp.NewISR, rp.PartitionEpoch = 0, st.LeaderEpoch, isr, state.Version
		for _, b := range isr { // v3 names the ISR with broker epochs (not checked, as Kafka's ZooKeeper mode)
			e := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
			e.BrokerID, e.BrokerEpoch = b, -1
			rp.NewEpochISR = append(rp.NewEpochISR, e)
		}
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctxT(t), kc)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	shrink := []int32{leader} // the followers out
	if resp := alter(reg.Czxid-1, shrink); resp.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("AlterPartition with broker epoch %d (registration %d): error %d, want STALE_BROKER_EPOCH", reg.Czxid-1, reg.Czxid, resp.ErrorCode)
	}
	if s := waitState(t, cl, z, "epochs", 0, "unchanged", isrIs(1, 2, 3)); s.LeaderEpoch != st.LeaderEpoch {
		t.Fatalf("state changed by a refused request: %+v", s)
	}
	resp := alter(reg.Czxid, []int32{1, 2, 3})
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("AlterPartition with the registration's epoch: %+v", resp)
	}
}
