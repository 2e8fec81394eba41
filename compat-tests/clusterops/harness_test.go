// Package clusterops tests the controller's operator-driven work on a
// cluster of brokers through franz-go's kadm: preferred and unclean leader
// elections and the leader-balance check.
package clusterops

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

func ctxT(t testing.TB) context.Context { return kafkaenv.Context(t, 60*time.Second) }

// fast makes ISR changes and fetch backoffs quick and sets the balance
// check (interval 0: off).
func fast(rebalance time.Duration) kafkaenv.Option {
	return kafkaenv.Configure(func(c *broker.Config) {
		c.Replication.LagTimeMax = 2 * time.Second
		c.Replication.FetchBackoff = 50 * time.Millisecond
		c.LeaderBalance.Enable = rebalance > 0
		c.LeaderBalance.CheckInterval = rebalance
	})
}

// client is a kgo client of every running broker.
func client(t testing.TB, cl *kafkaenv.Cluster, opts ...kgo.Opt) *kgo.Client {
	return cl.Brokers[0].Client(append([]kgo.Opt{kgo.SeedBrokers(cl.Seeds()...)}, opts...)...)
}

// partitionState is a state znode as Kafka's tools read it.
type partitionState struct {
	Leader      int32   `json:"leader"`
	LeaderEpoch int32   `json:"leader_epoch"`
	ISR         []int32 `json:"isr"`
}

func readState(t testing.TB, cl *kafkaenv.Cluster, z *zk.Conn, topic string, p int) (partitionState, error) {
	var s partitionState
	data, _, err := z.Get(cl.Brokers[0].Path(fmt.Sprintf("/brokers/topics/%s/partitions/%d/state", topic, p)))
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	return s, err
}

// waitStates polls (bounded, 30 s) until ok holds for the states of
// topic's n partitions.
func waitStates(t testing.TB, cl *kafkaenv.Cluster, z *zk.Conn, topic string, n int, what string, ok func([]partitionState) bool) []partitionState {
	t.Helper()
	var ss []partitionState
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ss = ss[:0]
		for p := 0; p < n && err == nil; p++ {
			var s partitionState
			s, err = readState(t, cl, z, topic, p)
			ss = append(ss, s)
		}
		if err == nil && ok(ss) {
			return ss
		}
		err = nil
	}
	t.Fatalf("%s: never %s: last %+v", topic, what, ss)
	return nil
}

// leadersPerBroker counts the partitions each broker leads.
func leadersPerBroker(ss []partitionState) map[int32]int {
	m := map[int32]int{}
	for _, s := range ss {
		m[s.Leader]++
	}
	return m
}

// createTopic creates topic and waits until the metadata gives every
// partition a leader.
func createTopic(t testing.TB, cl *kafkaenv.Cluster, topic string, partitions int32, rf int16) {
	t.Helper()
	adm := kadm.NewClient(client(t, cl))
	if r, err := adm.CreateTopic(ctxT(t), partitions, rf, nil, topic); err != nil || r.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, r.Err)
	}
	waitLed(t, cl, topic, int(partitions))
}

// waitLed waits until the metadata gives topic's n partitions a leader.
func waitLed(t testing.TB, cl *kafkaenv.Cluster, topic string, partitions int) {
	t.Helper()
	adm := kadm.NewClient(client(t, cl))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctxT(t), topic)
		n := 0
		for _, pd := range td[topic].Partitions {
			if err == nil && pd.Leader >= 0 && pd.Err == nil {
				n++
			}
		}
		if n == partitions {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: partitions never all led: %v %v", topic, td, err)
		}
	}
}

func allInISR(n int) func([]partitionState) bool {
	return func(ss []partitionState) bool {
		for _, s := range ss {
			if len(s.ISR) != n {
				return false
			}
		}
		return true
	}
}
