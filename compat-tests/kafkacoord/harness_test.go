package kafkacoord

import (
	"context"
	"fmt"
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

// settings: no initial rebalance delay, short sessions, quick
// replication; partitions of __consumer_offsets (0: Kafka's 50).
func settings(offsetsPartitions int32) kafkaenv.Option {
	return kafkaenv.Configure(func(c *broker.Config) {
		c.Groups.InitialRebalanceDelay = 0
		c.Groups.MinSessionTimeout = 500 * time.Millisecond
		c.Groups.OffsetsTopicPartitions = offsetsPartitions
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

// javaHash is java.lang.String.hashCode for ASCII, written again here
// from its definition so the test does not share the broker's code.
func javaHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return h
}

// partitionFor is Kafka's abs(hash) % n (Utils.abs maps MinInt32 to 0).
func partitionFor(group string, n int) int32 {
	h := javaHash(group)
	switch {
	case h == -1<<31:
		h = 0
	case h < 0:
		h = -h
	}
	return h % int32(n)
}

// client is a kgo client of every running broker.
func client(t testing.TB, cl *kafkaenv.Cluster, opts ...kgo.Opt) *kgo.Client {
	var seeds []string
	for _, e := range cl.Brokers {
		seeds = append(seeds, e.Addr)
	}
	return cl.Brokers[0].Client(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
}

// coordAnswer is one FindCoordinator answer, v4 (batched) or older.
type coordAnswer struct {
	ErrorCode int16
	NodeID    int32
}

// findCoordinator asks broker id for group's coordinator.
func findCoordinator(t testing.TB, kc *kgo.Client, id int32, group string) (*coordAnswer, error) {
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = group, []string{group}
	r, err := kc.Broker(int(id)).Request(ctxT(t), fc)
	if err != nil {
		return nil, err
	}
	fr := r.(*kmsg.FindCoordinatorResponse)
	if fr.Version >= 4 {
		if len(fr.Coordinators) != 1 {
			return nil, fmt.Errorf("v4 answer with %d coordinators", len(fr.Coordinators))
		}
		return &coordAnswer{fr.Coordinators[0].ErrorCode, fr.Coordinators[0].NodeID}, nil
	}
	return &coordAnswer{fr.ErrorCode, fr.NodeID}, nil
}

// coordinatorOf waits until FindCoordinator (through any broker) names
// group's coordinator, and returns it.
func coordinatorOf(t testing.TB, kc *kgo.Client, group string) int32 {
	t.Helper()
	var id int32 = -1
	waitFor(t, 60*time.Second, "a coordinator for "+group, func() bool {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey = group
		r, err := fc.RequestWith(ctxT(t), kc)
		if err != nil || r.ErrorCode != 0 {
			return false
		}
		id = r.NodeID
		return true
	})
	return id
}

// offsetsLeaders is the leader of each __consumer_offsets partition in
// broker id's metadata.
func offsetsLeaders(t testing.TB, kc *kgo.Client, id int32) (leaders []int32, internal bool, ok bool) {
	m := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("__consumer_offsets")
	m.Topics = append(m.Topics, rt)
	r, err := kc.Broker(int(id)).Request(ctxT(t), m)
	if err != nil {
		return nil, false, false
	}
	mr := r.(*kmsg.MetadataResponse)
	if len(mr.Topics) != 1 || mr.Topics[0].ErrorCode != 0 {
		return nil, false, false
	}
	leaders = make([]int32, len(mr.Topics[0].Partitions))
	for _, p := range mr.Topics[0].Partitions {
		leaders[p.Partition] = p.Leader
	}
	return leaders, mr.Topics[0].IsInternal, true
}
