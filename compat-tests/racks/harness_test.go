// Package racks tests broker.rack through real clients on a cluster of
// brokers: the registration, Metadata and DescribeCluster, rack-aware
// replica placement, fetch from the closest replica (KIP-392) with
// franz-go's kgo.Rack, and the replication throttles (KIP-73).
package racks

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

func ctxT(t testing.TB) context.Context { return kafkaenv.Context(t, 60*time.Second) }

// withRacks gives the brokers, started one after the other as ids 1, 2,
// ..., the racks in turn, and quick ISR changes and fetch backoffs.
func withRacks(racks ...string) kafkaenv.Option {
	started := 0
	return kafkaenv.Configure(func(c *broker.Config) {
		c.Rack = racks[started%len(racks)]
		started++
		c.Replication.LagTimeMax = 2 * time.Second
		c.Replication.FetchBackoff = 50 * time.Millisecond
	})
}

// client is a kgo client of every running broker.
func client(t testing.TB, cl *kafkaenv.Cluster, opts ...kgo.Opt) *kgo.Client {
	return cl.Brokers[0].Client(append([]kgo.Opt{kgo.SeedBrokers(cl.Seeds()...)}, opts...)...)
}

// createAssigned creates topic with a manual assignment and waits until
// every partition has a leader in the metadata.
func createAssigned(t testing.TB, cl *kafkaenv.Cluster, topic string, assignment [][]int32, configs map[string]*string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, rs := range assignment {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = int32(p), rs
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, v
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctxT(t), client(t, cl))
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %v %+v", topic, err, resp)
	}
	waitTopic(t, cl, topic, len(assignment), func(kadm.PartitionDetail) bool { return true })
}

// waitTopic waits (30 s) until the metadata has topic's n partitions
// led and ok for each; it returns the last details.
func waitTopic(t testing.TB, cl *kafkaenv.Cluster, topic string, n int, ok func(kadm.PartitionDetail) bool) kadm.TopicDetail {
	t.Helper()
	adm := kadm.NewClient(client(t, cl))
	var td kadm.TopicDetails
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		td, err = adm.ListTopics(ctxT(t), topic)
		parts := td[topic].Partitions
		good := err == nil && len(parts) == n
		for _, pd := range parts {
			good = good && pd.Err == nil && pd.Leader >= 0 && ok(pd)
		}
		if good {
			return td[topic]
		}
	}
	t.Fatalf("%s: metadata never had %d good partitions: %v %v", topic, n, td, err)
	return kadm.TopicDetail{}
}
