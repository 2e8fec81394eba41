package racks

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// servedBy counts, with a kgo hook, the records each broker served.
type servedBy struct {
	mu sync.Mutex
	n  map[int32]int
}

func (s *servedBy) OnFetchBatchRead(meta kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n[meta.NodeID] += m.NumRecords
}

func (s *servedBy) snapshot() map[int32]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int32]int{}
	for k, v := range s.n {
		out[k] = v
	}
	return out
}

// produceN produces n records with values prefix-i, acks=all.
func produceN(t testing.TB, cl *kafkaenv.Cluster, topic, prefix string, n int) {
	t.Helper()
	p := client(t, cl, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	for i := 0; i < n; i++ {
		p.Produce(ctxT(t), &kgo.Record{Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := p.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// consumeUntil polls until want records came, in order from offset 0
// (bounded: 60 s).
func consumeUntil(t testing.TB, c *kgo.Client, got *[]string, want int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(*got) < want && time.Now().Before(deadline) {
		fs := c.PollRecords(ctxT(t), 100)
		fs.EachRecord(func(r *kgo.Record) {
			if int(r.Offset) != len(*got) {
				t.Fatalf("record at offset %d after %d records", r.Offset, len(*got))
			}
			*got = append(*got, string(r.Value))
		})
	}
	if len(*got) != want {
		t.Fatalf("consumed %d records, want %d", len(*got), want)
	}
}

// TestFetchFromClosestReplica: three brokers in racks a, b, c with
// RackAwareReplicaSelector; a partition led by broker 1 (rack a) and
// followed by 2 and 3. A consumer in rack b (kgo.Rack) is sent to broker 2
// and reads the records from it; once broker 2 stops, the consumer goes
// back to the leader and reads on without loss or duplicates.
func TestFetchFromClosestReplica(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, withRacks("a", "b", "c"), kafkaenv.Configure(func(c *broker.Config) {
		c.Replication.ReplicaSelector = broker.RackAwareReplicaSelector
	}))
	createAssigned(t, cl, "near", [][]int32{{1, 2, 3}}, nil)
	waitTopic(t, cl, "near", 1, func(pd kadm.PartitionDetail) bool { return len(pd.ISR) == 3 })
	produceN(t, cl, "near", "before", 300)

	hook := &servedBy{n: map[int32]int{}}
	c := client(t, cl, kgo.Rack("b"), kgo.ConsumeTopics("near"), kgo.WithHooks(hook),
		kgo.FetchMaxWait(200*time.Millisecond))
	var got []string
	consumeUntil(t, c, &got, 300)
	if n := hook.snapshot(); n[2] != 300 {
		t.Fatalf("records served by broker: %v, want all 300 from broker 2 (rack b)", n)
	}

	cl.Broker(2).Stop()
	produceN(t, cl, "near", "after", 300)
	consumeUntil(t, c, &got, 600)
	for i, v := range got {
		want := fmt.Sprintf("before-%d", i)
		if i >= 300 {
			want = fmt.Sprintf("after-%d", i-300)
		}
		if v != want {
			t.Fatalf("record %d is %q, want %q", i, v, want)
		}
	}
	if n := hook.snapshot(); n[2] != 300 || n[1]+n[3] != 300 {
		t.Fatalf("records served by broker after broker 2 stopped: %v", n)
	}
}

// fetchOne sends one Fetch of near-0 at offset to broker id, at the
// highest version the client's versions allow, and returns the partition's
// answer.
func fetchOne(t testing.TB, c *kgo.Client, id int32, offset int64, rack string) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.Rack = -1, 10, 1<<20, rack
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "near"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := c.Broker(int(id)).Request(ctxT(t), req)
	if err != nil {
		t.Fatalf("fetch from %d: %v", id, err)
	}
	fr := resp.(*kmsg.FetchResponse)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch from %d: %+v", id, fr)
	}
	return fr.Topics[0].Partitions[0]
}

// TestFollowerFetchRules: Kafka's rules for consumer fetches at a
// follower and preferred replicas at the leader, with raw Fetch requests.
func TestFollowerFetchRules(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, withRacks("a", "b", "c"), kafkaenv.Configure(func(c *broker.Config) {
		c.Replication.ReplicaSelector = broker.RackAwareReplicaSelector
	}))
	createAssigned(t, cl, "near", [][]int32{{1, 2, 3}}, nil)
	waitTopic(t, cl, "near", 1, func(pd kadm.PartitionDetail) bool { return len(pd.ISR) == 3 })
	produceN(t, cl, "near", "r", 10)
	v11 := client(t, cl, kgo.MaxVersions(kversion.V2_4_0())) // Fetch v11
	v10 := client(t, cl, kgo.MaxVersions(kversion.V2_2_0())) // Fetch v10: no client metadata

	// The follower's high watermark follows the leader's answers.
	var p kmsg.FetchResponseTopicPartition
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if p = fetchOne(t, v11, 2, 0, ""); p.ErrorCode == 0 && p.HighWatermark == 10 {
			break
		}
	}
	if p.ErrorCode != 0 || p.HighWatermark != 10 || len(p.RecordBatches) == 0 || p.PreferredReadReplica != -1 {
		t.Fatalf("v11 consumer fetch at follower 2: %+v", p)
	}
	if p := fetchOne(t, v11, 2, 10, ""); p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
		t.Errorf("at the follower's high watermark: %+v", p)
	}
	if p := fetchOne(t, v11, 2, 11, ""); p.ErrorCode != 1 { // OFFSET_OUT_OF_RANGE
		t.Errorf("past the follower's log end: code %d, want 1", p.ErrorCode)
	}
	if p := fetchOne(t, v10, 2, 0, ""); p.ErrorCode != 6 { // NOT_LEADER_OR_FOLLOWER
		t.Errorf("v10 consumer fetch at a follower: code %d, want 6", p.ErrorCode)
	}

	// The leader: rack c goes to broker 3, without records; its own rack,
	// no rack, an unknown rack or v10 read at the leader.
	if p := fetchOne(t, v11, 1, 0, "c"); p.PreferredReadReplica != 3 || len(p.RecordBatches) != 0 || p.HighWatermark != 10 {
		t.Errorf("rack c at the leader: %+v", p)
	}
	for _, rack := range []string{"a", "", "z"} {
		if p := fetchOne(t, v11, 1, 0, rack); p.PreferredReadReplica != -1 || len(p.RecordBatches) == 0 {
			t.Errorf("rack %q at the leader: %+v", rack, p)
		}
	}
	if p := fetchOne(t, v10, 1, 0, "c"); len(p.RecordBatches) == 0 {
		t.Errorf("v10 with rack c at the leader: %+v", p)
	}
}
