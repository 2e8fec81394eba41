package kafkago

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// partitionState reads a partition's state znode as Kafka's tools do.
type partitionState struct {
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	ISR             []int32 `json:"isr"`
	ControllerEpoch int32   `json:"controller_epoch"`
}

func readState(t testing.TB, z *zk.Conn, e *env, topic string, p int) (partitionState, error) {
	t.Helper()
	data, _, err := z.Get(e.Path(fmt.Sprintf("/brokers/topics/%s/partitions/%d/state", topic, p)))
	var s partitionState
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	return s, err
}

// waitState polls (bounded) until the state znode satisfies ok.
func waitState(t testing.TB, z *zk.Conn, e *env, topic string, p int, what string, ok func(partitionState) bool) partitionState {
	t.Helper()
	var s partitionState
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s, err = readState(t, z, e, topic, p); err == nil && ok(s) {
			return s
		}
	}
	t.Fatalf("%s-%d: never %s: last %+v (%v)", topic, p, what, s, err)
	return s
}

// TestLeaderFailoverByController: two brokers; when a partition's leader
// goes away the controller takes it out of leadership (the ISR keeps its
// last member, as without unclean election), bumping the leader epoch,
// and gives it back when the broker returns; the returned broker learns
// of its leadership through its state watch, opens the partition and
// serves what it held. Stopping the controller moves control to broker 2
// (controller_epoch 2).
func TestLeaderFailoverByController(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 2)
	b1, b2 := cl.Broker(1), cl.Broker(2)
	z := b1.ZK()
	adm := b1.Admin()
	ctx := ctxT(t)
	// RF 2 over two brokers: Kafka's assignment shifts each partition's
	// first replica, so each broker leads one of the two partitions.
	resp, err := adm.CreateTopic(ctx, 2, 2, nil, "f")
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	// Metadata may come from broker 2, which loads the topic when its
	// watch fires.
	var p1, p2 int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctx, "f")
		leaderOf := map[int32]int{}
		if err == nil {
			for _, pd := range td["f"].Partitions.Sorted() {
				leaderOf[pd.Leader] = int(pd.Partition)
			}
		}
		var ok1, ok2 bool
		p1, ok1 = leaderOf[1]
		p2, ok2 = leaderOf[2]
		if ok1 && ok2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("each broker should lead one partition: %+v %v", td["f"].Partitions, err)
		}
	}
	produce := func(p int, v string) {
		t.Helper()
		c := b1.Client(kgo.SeedBrokers(cl.Seeds()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err := c.ProduceSync(ctx, &kgo.Record{Topic: "f", Partition: int32(p), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s to f-%d: %v", v, p, err)
		}
		c.Close()
	}
	produce(p2, "before")
	s0, _ := readState(t, z, b1, "f", p2)

	b2.Stop()
	s := waitState(t, z, b1, "f", p2, "offline", func(s partitionState) bool { return s.Leader == -1 })
	if s.LeaderEpoch != s0.LeaderEpoch+1 || len(s.ISR) != 1 || s.ISR[0] != 2 {
		t.Fatalf("after broker 2 stopped: %+v, want leader -1, epoch %d, ISR [2]", s, s0.LeaderEpoch+1)
	}
	b2.Start()
	s = waitState(t, z, b1, "f", p2, "led by 2 again", func(s partitionState) bool { return s.Leader == 2 })
	if s.LeaderEpoch <= s0.LeaderEpoch+1 {
		t.Fatalf("leader epoch %d after return, want above %d", s.LeaderEpoch, s0.LeaderEpoch+1)
	}
	consumeOne(t, cl, p2, "before")

	// The controller goes: broker 2 takes control (controller_epoch 2).
	// As Kafka's new controller, it leaves the state of a partition it
	// cannot elect for as it found it (clients are told the leader is not
	// available, since broker 1 is not live); broker 1 leads it again when
	// it returns.
	produce(p1, "one")
	before, _ := readState(t, z, b1, "f", p1)
	b1.Stop()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		data, _, err := z.Get(b2.Path("/controller"))
		var c struct {
			BrokerID int32 `json:"brokerid"`
		}
		if err == nil && json.Unmarshal(data, &c) == nil && c.BrokerID == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker 2 never became the controller: %s %v", data, err)
		}
	}
	if epoch, _, err := z.Get(b2.Path("/controller_epoch")); err != nil || string(epoch) != "2" {
		t.Fatalf("/controller_epoch %q (%v), want 2", epoch, err)
	}
	produce(p2, "two")
	if s, _ := readState(t, z, b2, "f", p1); s.Leader != before.Leader || s.LeaderEpoch != before.LeaderEpoch {
		t.Fatalf("f-%d changed by the new controller: %+v, was %+v", p1, s, before)
	}
	b1.Start()
	consumeOne(t, cl, p1, "one")
	consumeOne(t, cl, p2, "before")
}

// consumeOne reads partition p of f from the start and wants value first.
func consumeOne(t *testing.T, cl *kafkaenv.Cluster, p int, value string) {
	t.Helper()
	c := cl.Brokers[0].Client(kgo.SeedBrokers(cl.Seeds()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"f": {int32(p): kgo.NewOffset().AtStart()}}))
	ctx := kafkaenv.Context(t, 20*time.Second)
	for {
		fs := c.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("f-%d: %q never consumed", p, value)
		}
		var got []string
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		if len(got) > 0 {
			if got[0] != value {
				t.Fatalf("f-%d: first record %q, want %q", p, got[0], value)
			}
			c.Close()
			return
		}
	}
}
