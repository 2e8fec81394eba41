package kafkatxn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

// ctxT times out after 90 s or at the end of the test.
func ctxT(t testing.TB) context.Context { return kafkaenv.Context(t, 90*time.Second) }

// settings: few partitions of the internal topics (quick to create and
// load), quick replication, no initial rebalance delay, the timed-out
// transaction check every 200 ms.
func settings() kafkaenv.Option {
	return kafkaenv.Configure(func(c *broker.Config) {
		c.Groups.InitialRebalanceDelay = 0
		c.Groups.MinSessionTimeout = 500 * time.Millisecond
		c.Groups.OffsetsTopicPartitions = 3
		c.Txn.StateLogPartitions = 3
		c.Txn.AbortCheck = 200 * time.Millisecond
		c.Replication.LagTimeMax = 2 * time.Second
		c.Replication.FetchBackoff = 50 * time.Millisecond
	})
}

// waitFor polls cond every 20 ms for at most d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for: %s", d, what)
		}
	}
}

// client is a kgo client of every broker of cl.
func client(t testing.TB, cl *kafkaenv.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	kc, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cl.Seeds()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	return kc
}

// txnCoordinator waits until FindCoordinator (key type 1) names id's
// coordinator and returns it.
func txnCoordinator(t testing.TB, kc *kgo.Client, id string) int32 {
	t.Helper()
	var node int32 = -1
	waitFor(t, 60*time.Second, "a transaction coordinator for "+id, func() bool {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorType, fc.CoordinatorKey, fc.CoordinatorKeys = 1, id, []string{id}
		r, err := fc.RequestWith(ctxT(t), kc)
		if err != nil {
			return false
		}
		code, n := r.ErrorCode, r.NodeID
		if r.Version >= 4 && len(r.Coordinators) == 1 {
			code, n = r.Coordinators[0].ErrorCode, r.Coordinators[0].NodeID
		}
		node = n
		return code == 0
	})
	return node
}

// coordinatorOf waits until FindCoordinator names group's coordinator.
func coordinatorOf(t testing.TB, kc *kgo.Client, group string) int32 {
	t.Helper()
	var node int32 = -1
	waitFor(t, 60*time.Second, "a coordinator for "+group, func() bool {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey, fc.CoordinatorKeys = group, []string{group}
		r, err := fc.RequestWith(ctxT(t), kc)
		if err != nil {
			return false
		}
		code, n := r.ErrorCode, r.NodeID
		if r.Version >= 4 && len(r.Coordinators) == 1 {
			code, n = r.Coordinators[0].ErrorCode, r.Coordinators[0].NodeID
		}
		node = n
		return code == 0
	})
	return node
}

// createTopic creates topic with n partitions and rf replicas and waits
// until every broker's metadata has leaders for it.
func createTopic(t testing.TB, cl *kafkaenv.Cluster, kc *kgo.Client, topic string, n int32, rf int16) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, n, rf
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	r, err := req.RequestWith(ctxT(t), kc)
	if err != nil || len(r.Topics) != 1 || (r.Topics[0].ErrorCode != 0 && r.Topics[0].ErrorCode != 36) {
		t.Fatalf("CreateTopics %s: %v %+v", topic, err, r)
	}
	for _, e := range cl.Brokers {
		if e.Broker() == nil {
			continue
		}
		id := e.Config.BrokerID
		waitFor(t, 30*time.Second, "leaders of "+topic, func() bool {
			m := kmsg.NewPtrMetadataRequest()
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(topic)
			m.Topics = append(m.Topics, mt)
			resp, err := kc.Broker(int(id)).Request(ctxT(t), m)
			if err != nil {
				return false
			}
			mr := resp.(*kmsg.MetadataResponse)
			if len(mr.Topics) != 1 || mr.Topics[0].ErrorCode != 0 || len(mr.Topics[0].Partitions) != int(n) {
				return false
			}
			for _, p := range mr.Topics[0].Partitions {
				if p.Leader < 0 {
					return false
				}
			}
			return true
		})
	}
}

// createAssigned creates topic with one partition on replicas (the first
// leads) and waits for its leaders.
func createAssigned(t testing.TB, cl *kafkaenv.Cluster, kc *kgo.Client, topic string, replicas ...int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	rt.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: replicas}}
	req.Topics, req.TimeoutMillis = append(req.Topics, rt), 30000
	if r, err := req.RequestWith(ctxT(t), kc); err != nil || r.Topics[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics %s: %v %+v", topic, err, r)
	}
	createTopic(t, cl, kc, topic, 1, int16(len(replicas)))
}

// brokersBut is the brokers of the 3-broker cluster other than id, in id
// order.
func brokersBut(id int32) []int32 {
	var others []int32
	for b := int32(1); b <= 3; b++ {
		if b != id {
			others = append(others, b)
		}
	}
	return others
}
