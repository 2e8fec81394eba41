package kafkago

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// TestLeaderFailoverByController: two brokers, RF 2; when a partition's
// leader goes away the controller elects the other replica (the first
// live ISR member), bumping the leader epoch and taking the dead broker
// out of the ISR; the new leader serves what the old one held (it
// replicated it), and answers ListOffsets, OffsetForLeaderEpoch and
// fenced Fetches for the epochs. The returned broker follows, catches up
// and rejoins the ISR (the leader's AlterPartition). Stopping the
// controller moves control to broker 2 (controller_epoch 2), which
// elects itself for the partitions the old controller led.
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
	s := waitState(t, z, b1, "f", p2, "led by 1", func(s partitionState) bool { return s.Leader == 1 })
	if s.LeaderEpoch != s0.LeaderEpoch+1 || len(s.ISR) != 1 || s.ISR[0] != 1 {
		t.Fatalf("after broker 2 stopped: %+v, want leader 1, epoch %d, ISR [1]", s, s0.LeaderEpoch+1)
	}
	consumeOne(t, cl, p2, "before")
	checkEpochs(t, b1, p2, s0.LeaderEpoch, s.LeaderEpoch)
	b2.Start()
	waitState(t, z, b1, "f", p2, "2 back in the ISR", func(s partitionState) bool { return len(s.ISR) == 2 && s.Leader == 1 })

	// The controller goes: broker 2 takes control (controller_epoch 2)
	// and leads both partitions.
	waitState(t, z, b1, "f", p1, "2 in the ISR", func(s partitionState) bool { return len(s.ISR) == 2 })
	produce(p1, "one")
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
	waitState(t, z, b2, "f", p1, "led by 2", func(s partitionState) bool { return s.Leader == 2 })
	consumeOne(t, cl, p1, "one")
	produce(p2, "two")
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

// checkEpochs asks the leader of f-p, now in leader epoch cur (old
// before), what clients ask after a leader change: ListOffsets names the
// current epoch; OffsetForLeaderEpoch with the current epoch answers it
// and the log end, for the old epoch where the next one starts (1: one
// record was written in the old epoch); a Fetch with the old epoch is
// FENCED_LEADER_EPOCH.
func checkEpochs(t *testing.T, leader *env, p int, old, cur int32) {
	t.Helper()
	c := leader.Client()
	ctx := ctxT(t)
	lo := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "f"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = int32(p), -1, cur
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	lr, err := lo.RequestWith(ctx, c)
	if err != nil || lr.Topics[0].Partitions[0].ErrorCode != 0 || lr.Topics[0].Partitions[0].LeaderEpoch != cur {
		t.Fatalf("ListOffsets in epoch %d: %+v %v", cur, lr, err)
	}
	for _, tc := range []struct {
		requested  int32
		wantEpoch  int32
		wantOffset int64
	}{{cur, cur, 1}, {old, old, 1}} {
		oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
		oe.ReplicaID = -1
		ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
		ot.Topic = "f"
		op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		op.Partition, op.CurrentLeaderEpoch, op.LeaderEpoch = int32(p), cur, tc.requested
		ot.Partitions = append(ot.Partitions, op)
		oe.Topics = append(oe.Topics, ot)
		or, err := oe.RequestWith(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		got := or.Topics[0].Partitions[0]
		if got.ErrorCode != 0 || got.LeaderEpoch != tc.wantEpoch || got.EndOffset != tc.wantOffset {
			t.Fatalf("OffsetForLeaderEpoch(epoch %d, current %d): %+v, want epoch %d end %d", tc.requested, cur, got, tc.wantEpoch, tc.wantOffset)
		}
	}
	fr := kmsg.NewPtrFetchRequest()
	fr.ReplicaID, fr.MaxWaitMillis, fr.MaxBytes = -1, 0, 1<<20
	td, err := kadm.NewClient(c).ListTopics(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "f", td["f"].ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.CurrentLeaderEpoch, fp.PartitionMaxBytes = int32(p), old, 1<<20
	ft.Partitions = append(ft.Partitions, fp)
	fr.Topics = append(fr.Topics, ft)
	kr, err := c.Broker(int(leader.Config.BrokerID)).Request(ctx, fr) // kgo sends a bare Fetch to any broker
	fres, _ := kr.(*kmsg.FetchResponse)
	if err != nil || fres.Topics[0].Partitions[0].ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("Fetch with old epoch %d: %+v %v, want FENCED_LEADER_EPOCH", old, fres, err)
	}
}

// TestClusterMetadataAfterBrokerLoss: three brokers, RF 3. Metadata from
// any broker lists the three brokers and each partition's three replicas;
// after broker 3 stops it lists two brokers, broker 3 among every
// partition's offline replicas and in no ISR, and the partition broker 3
// led is led by another ISR member at the next leader epoch.
func TestClusterMetadataAfterBrokerLoss(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3)
	adm := kadm.NewClient(cl.Broker(1).Client(kgo.SeedBrokers(cl.Seeds()...)))
	ctx := ctxT(t)
	if r, err := adm.CreateTopic(ctx, 3, 3, nil, "m"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	var ledBy3 int32 = -1
	for deadline := time.Now().Add(20 * time.Second); ledBy3 < 0; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctx, "m")
		if err == nil && len(td["m"].Partitions) == 3 {
			for _, p := range td["m"].Partitions {
				if len(p.Replicas) != 3 {
					t.Fatalf("partition %d replicas %v, want 3", p.Partition, p.Replicas)
				}
				if p.Leader == 3 {
					ledBy3 = p.Partition
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no partition led by broker 3: %+v %v", td["m"].Partitions, err)
		}
	}
	cl.Broker(3).Stop()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		bs, err1 := adm.ListBrokers(ctx)
		td, err2 := adm.ListTopics(ctx, "m")
		ok := err1 == nil && err2 == nil && len(bs) == 2 && len(td["m"].Partitions) == 3
		if ok {
			for _, p := range td["m"].Partitions {
				ok = ok && len(p.OfflineReplicas) == 1 && p.OfflineReplicas[0] == 3
				if p.Partition == ledBy3 {
					ok = ok && p.Leader >= 1 && p.Leader <= 2 && p.LeaderEpoch == 1
				}
				ok = ok && len(p.ISR) == 2 && p.ISR[0] != 3 && p.ISR[1] != 3
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after broker 3 stopped: brokers %v (%v), partitions %+v (%v)", bs, err1, td["m"].Partitions, err2)
		}
	}
}
