package clusterops

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestCreatePartitionsOnACluster: "grow" goes from 3 to 6 partitions
// (RF 2) through kadm.CreatePartitions. The new partitions continue the
// leaders' round robin from partition 0's first replica (Kafka's
// createPartitions: partition p's first replica is broker
// (p + start) % 3), get their states and LeaderAndIsr (leader, both
// replicas in the ISR), and take records.
func TestCreatePartitionsOnACluster(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fast(0))
	createTopic(t, cl, "grow", 3, 2)
	adm := kadm.NewClient(client(t, cl))
	// kadm reads the partition count from the metadata first, which a
	// broker may not have yet (it follows UpdateMetadata): retry that.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		rs, err := adm.CreatePartitions(ctxT(t), 3, "grow")
		if err == nil && rs["grow"].Err == nil {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("CreatePartitions: %v %v", err, rs["grow"].Err)
		}
	}
	waitLed(t, cl, "grow", 6)
	z := cl.Brokers[0].ZK()
	waitStates(t, cl, z, "grow", 6, "both replicas in every ISR", allInISR(2))
	parts := listPartitions(t, adm, "grow", 6)
	start := int(parts[0].Replicas[0]) - 1 // brokers 1, 2, 3
	for p := int32(3); p < 6; p++ {
		if want := int32((int(p)+start)%3 + 1); parts[p].Replicas[0] != want {
			t.Errorf("grow-%d: replicas %v, want %d first (partition 0: %v)", p, parts[p].Replicas, want, parts[0].Replicas)
		}
	}
	var rs []*kgo.Record
	for part := int32(3); part < 6; part++ {
		rs = append(rs, &kgo.Record{Topic: "grow", Partition: part, Value: []byte("v")})
	}
	p := client(t, cl, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	// A broker's metadata may still show 3 partitions for a moment (its
	// UpdateMetadata is on its way): retry, bounded.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := p.ProduceSync(ctxT(t), rs...).FirstErr()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("produce to the new partitions: %v", err)
		}
		p.ForceMetadataRefresh()
	}
	c := client(t, cl, kgo.ConsumeTopics("grow"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := map[int32]int{}
	for len(got) < 3 && ctx.Err() == nil {
		c.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[r.Partition]++ })
	}
	if len(got) != 3 {
		t.Fatalf("read back from partitions %v, want 3, 4, 5", got)
	}
}

// TestCreatePartitionsDuringAMove: a topic whose znode has a move in
// progress (adding_replicas) is not grown: REASSIGNMENT_IN_PROGRESS, as
// Kafka (growing it would drop the move from the znode).
func TestCreatePartitionsDuringAMove(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fast(0))
	createAssigned(t, cl, "busy", [][]int32{{1, 2}})
	z := cl.Brokers[0].ZK()
	path := cl.Brokers[0].Path("/brokers/topics/busy")
	data, st, err := z.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	var tz map[string]any
	if err := json.Unmarshal(data, &tz); err != nil {
		t.Fatal(err)
	}
	tz["partitions"] = map[string][]int32{"0": {3, 1, 2}}
	tz["adding_replicas"] = map[string][]int32{"0": {3}}
	tz["removing_replicas"] = map[string][]int32{"0": {1}}
	moving, _ := json.Marshal(tz)
	if _, err := z.Set(path, moving, st.Version); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(client(t, cl))
	rs, err := adm.CreatePartitions(ctxT(t), 1, "busy")
	if err == nil {
		err = rs["busy"].Err
	}
	if !errors.Is(err, kerr.ReassignmentInProgress) {
		t.Fatalf("CreatePartitions during a move: %v, want REASSIGNMENT_IN_PROGRESS", err)
	}
}

// TestCreatePartitionsOnlyOnTheController: a broker that is not the
// controller answers CreatePartitions NOT_CONTROLLER, as Kafka's
// ZooKeeper-mode brokers do (the controller writes the new partitions'
// states), and the topic keeps its partitions.
func TestCreatePartitionsOnlyOnTheController(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 2, fast(0))
	createTopic(t, cl, "only", 2, 1)
	c := client(t, cl)
	listPartitions(t, kadm.NewClient(c), "only", 2)
	md, err := kadm.NewClient(c).BrokerMetadata(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	other := 3 - md.Controller // brokers 1 and 2
	req := kmsg.NewPtrCreatePartitionsRequest()
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = "only", 4
	req.Topics, req.TimeoutMillis = append(req.Topics, rt), 5000
	kresp, err := c.Broker(int(other)).Request(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.CreatePartitionsResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.NotController.Code {
		t.Fatalf("CreatePartitions on broker %d (controller %d): %+v, want NOT_CONTROLLER", other, md.Controller, resp.Topics)
	}
	if s, err := readState(t, cl, cl.Brokers[0].ZK(), "only", 2); err == nil {
		t.Fatalf("a state znode for partition 2 after the refused request: %+v", s)
	}
	listPartitions(t, kadm.NewClient(c), "only", 2)
}

// listPartitions waits until the metadata a broker answers (each follows
// the controller's UpdateMetadata in its own time) has topic with n
// partitions, and returns them.
func listPartitions(t *testing.T, adm *kadm.Client, topic string, n int) map[int32]kadm.PartitionDetail {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctxT(t), topic)
		if err == nil && td[topic].Err == nil && len(td[topic].Partitions) == n {
			return td[topic].Partitions
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: metadata %+v %v, want %d partitions", topic, td[topic], err, n)
		}
	}
}
