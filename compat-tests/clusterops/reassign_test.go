package clusterops

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestReassignUnderAcksAllLoad: mv-0 on brokers {1,2,3} moves to {2,3,4}
// (kadm.AlterPartitionAssignments) while an idempotent acks=all producer
// writes. ListPartitionReassignments shows the move (replicas
// [2 3 4 1], adding [4], removing [1]) until broker 4 is in the ISR; then
// the assignment and the ISR are {2,3,4}, the topic znode has no
// adding/removing, broker 1's replica is deleted, and every acknowledged
// record is read back once.
func TestReassignUnderAcksAllLoad(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 4, fast(0))
	createAssigned(t, cl, "mv", [][]int32{{1, 2, 3}})
	z := cl.Brokers[0].ZK()
	waitStates(t, cl, z, "mv", 1, "all in the ISR", allInISR(3))

	p := client(t, cl, kgo.DefaultProduceTopic("mv"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(40*time.Second))
	ctx := ctxT(t)
	var wg sync.WaitGroup
	var acked, failed []string
	var mu sync.Mutex
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // bounded: at most 20000 records, until stop
		defer wg.Done()
		for i := 0; i < 20000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := strconv.Itoa(i)
			err := p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr()
			mu.Lock()
			if err == nil {
				acked = append(acked, v)
			} else {
				failed = append(failed, v+": "+err.Error())
			}
			mu.Unlock()
		}
	}()
	waitAcked := func(n int) {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			k := len(acked)
			mu.Unlock()
			if k >= n {
				return
			}
		}
		t.Fatalf("fewer than %d records acknowledged", n)
	}
	waitAcked(200)

	adm := kadm.NewClient(client(t, cl))
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("mv", 0, []int32{2, 3, 4})
	rs, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil || rs.Error() != nil {
		t.Fatalf("AlterPartitionAssignments: %v %v", err, rs.Error())
	}
	sawMove := false
	set := kadm.TopicsSet{}
	set.Add("mv", 0)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ls, err := adm.ListPartitionReassignments(ctx, set)
		if err != nil {
			t.Fatalf("ListPartitionReassignments: %v", err)
		}
		r, ok := ls["mv"][0]
		if !ok {
			break
		}
		sawMove = true
		if !slices.Equal(r.Replicas, []int32{2, 3, 4, 1}) || !slices.Equal(r.AddingReplicas, []int32{4}) || !slices.Equal(r.RemovingReplicas, []int32{1}) {
			t.Errorf("move in progress: %+v, want replicas [2 3 4 1] adding [4] removing [1]", r)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the move never completed: %+v", r)
		}
	}
	if !sawMove {
		t.Log("the move completed before the first ListPartitionReassignments")
	}
	waitAcked(len(acked) + 200) // the producer goes on after the move
	close(stop)
	wg.Wait()

	st := waitStates(t, cl, z, "mv", 1, "ISR {2,3,4}", func(ss []partitionState) bool {
		isr := slices.Clone(ss[0].ISR)
		slices.Sort(isr)
		return slices.Equal(isr, []int32{2, 3, 4})
	})[0]
	if st.Leader == 1 {
		t.Errorf("broker 1 still leads: %+v", st)
	}
	data, _, err := z.Get(cl.Brokers[0].Path("/brokers/topics/mv"))
	if err != nil {
		t.Fatal(err)
	}
	var tz zkmeta.TopicZNode
	if err := json.Unmarshal(data, &tz); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tz.Partitions["0"], []int32{2, 3, 4}) || len(tz.AddingReplicas) != 0 || len(tz.RemovingReplicas) != 0 {
		t.Errorf("topic znode after the move: %s", data)
	}
	dir := filepath.Join(cl.Broker(1).Config.LogDirs[0], "mv-0")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker 1's replica %s was never deleted", dir)
		}
	}

	mu.Lock()
	want := slices.Clone(acked)
	t.Logf("%d records acknowledged, %d failed %v", len(acked), len(failed), failed)
	mu.Unlock()
	c := client(t, cl, kgo.ConsumeTopics("mv"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int{}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for missing(seen, want) && cctx.Err() == nil {
		c.PollFetches(cctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
	}
	for _, v := range want {
		if seen[v] != 1 {
			t.Fatalf("acknowledged record %s read %d times", v, seen[v])
		}
	}
}

func missing(seen map[string]int, want []string) bool {
	for _, v := range want {
		if seen[v] == 0 {
			return true
		}
	}
	return false
}

// createAssigned creates topic with the replica assignment given and
// waits until every partition has a leader.
func createAssigned(t testing.TB, cl *kafkaenv.Cluster, topic string, assignment [][]int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, rs := range assignment {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = int32(p), rs
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctxT(t), client(t, cl))
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create %s: %v %+v", topic, err, resp)
	}
	waitLed(t, cl, topic, len(assignment))
}
