package replication

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/broker/replica"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/store/segment"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

// ctxT times out after 60 s or at the end of the test.
func ctxT(t testing.TB) context.Context { return kafkaenv.Context(t, 60*time.Second) }

// fastReplication makes ISR shrinks and fetch backoffs quick (lag: replica.lag.time.max.ms).
func fastReplication(lag time.Duration) kafkaenv.Option {
	return kafkaenv.Configure(func(c *broker.Config) {
		c.Replication.LagTimeMax = lag
		c.Replication.FetchBackoff = 50 * time.Millisecond
		c.Replication.HighWatermarkCheckpointInterval = 200 * time.Millisecond
	})
}

// partitionState is a state znode as Kafka's tools read it.
type partitionState struct {
	Leader      int32   `json:"leader"`
	LeaderEpoch int32   `json:"leader_epoch"`
	ISR         []int32 `json:"isr"`
}

// waitState polls (bounded) until topic-p's state znode satisfies ok.
func waitState(t testing.TB, cl *kafkaenv.Cluster, z *zk.Conn, topic string, p int, what string, ok func(partitionState) bool) partitionState {
	t.Helper()
	var s partitionState
	var err error
	path := cl.Brokers[0].Path(fmt.Sprintf("/brokers/topics/%s/partitions/%d/state", topic, p))
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var data []byte
		if data, _, err = z.Get(path); err == nil {
			s = partitionState{}
			if err = json.Unmarshal(data, &s); err == nil && ok(s) {
				return s
			}
		}
	}
	t.Fatalf("%s-%d: never %s: last %+v (%v)", topic, p, what, s, err)
	return s
}

func isrIs(want ...int32) func(partitionState) bool {
	return func(s partitionState) bool {
		got := slices.Clone(s.ISR)
		slices.Sort(got)
		return slices.Equal(got, want)
	}
}

// createTopic creates topic with partitions and replication factor rf
// and waits until every partition has a leader in the metadata.
func createTopic(t testing.TB, cl *kafkaenv.Cluster, topic string, partitions int32, rf int16, configs map[string]*string) {
	t.Helper()
	ctx := ctxT(t)
	kc := cl.Brokers[0].Client(kgo.SeedBrokers(cl.Seeds()...))
	adm := kadm.NewClient(kc)
	if r, err := adm.CreateTopic(ctx, partitions, rf, configs, topic); err != nil || r.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, r.Err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctx, topic)
		n := 0
		if err == nil {
			for _, pd := range td[topic].Partitions {
				if pd.Leader >= 0 && pd.Err == nil {
					n++
				}
			}
		}
		if n == int(partitions) && loadedEverywhere(t, cl, topic, kc) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: partitions never all led: %v %v", topic, td, err)
		}
	}
}

// client is a kgo client of every running broker.
func client(t testing.TB, cl *kafkaenv.Cluster, opts ...kgo.Opt) *kgo.Client {
	return cl.Brokers[0].Client(append([]kgo.Opt{kgo.SeedBrokers(cl.Seeds()...)}, opts...)...)
}

// logBytes reads every batch of a stopped broker's replica of topic-p
// from its data directory (segment.Open on the broker's files).
func logBytes(t testing.TB, e *kafkaenv.Env, topic string, p int) (start int64, data []byte) {
	t.Helper()
	dir := filepath.Join(e.Config.LogDirs[0], fmt.Sprintf("%s-%d", topic, p))
	l, err := segment.Open(dir, segment.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	defer l.Close()
	for off := l.StartOffset(); off < l.NextOffset(); {
		r, err := l.Read(off, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, r.Len)
		r.ReadAt(buf, 0)
		next := r.NextOffset
		r.Release()
		data = append(data, buf...)
		off = next
	}
	return l.StartOffset(), data
}

// consumeAll reads topic-p from the start until it has n records (or
// fails after 30 s).
func consumeAll(t testing.TB, cl *kafkaenv.Cluster, topic string, n int) []*kgo.Record {
	t.Helper()
	c := client(t, cl, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	var out []*kgo.Record
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(out) < n {
		fs := c.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", len(out), n)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// readCheckpoint is topic-p's entry in a broker's
// replication-offset-checkpoint (-1: none).
func readCheckpoint(t testing.TB, e *kafkaenv.Env, topic string, p int32) int64 {
	t.Helper()
	m, err := replica.ReadHighWatermarks(e.Config.LogDirs[0])
	if err != nil {
		t.Fatal(err)
	}
	hw, ok := m[replica.TopicPartition{Topic: topic, Partition: p}]
	if !ok {
		return -1
	}
	return hw
}

// leaderOf is topic-p's leader in the metadata (polled: a broker learns
// of a new topic through its watch).
func leaderOf(t testing.TB, cl *kafkaenv.Cluster, topic string, p int32) int32 {
	t.Helper()
	adm := kadm.NewClient(client(t, cl))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctxT(t), topic)
		if pd, ok := td[topic].Partitions[p]; err == nil && ok && pd.Leader >= 0 {
			return pd.Leader
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s-%d has no leader: %+v %v", topic, p, td, err)
		}
	}
}

func kadmClient(c *kgo.Client) *kadm.Client { return kadm.NewClient(c) }

// loadedEverywhere reports whether every running broker itself answers
// Metadata for topic with a leader for each partition: each loads a new
// topic when its own watch fires.
func loadedEverywhere(t testing.TB, cl *kafkaenv.Cluster, topic string, kc *kgo.Client) bool {
	bs, err := kadm.NewClient(kc).ListBrokers(ctxT(t))
	if err != nil || len(bs) != len(cl.Seeds()) {
		return false
	}
	for _, b := range bs {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctxT(t), kc.Broker(int(b.NodeID)))
		if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) == 0 {
			return false
		}
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return false
			}
		}
	}
	return true
}
