package clusterops

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestOldToolsZNodes: the znodes tools older than the admin APIs write.
// /admin/preferred_replica_election moves leadership back to broker 1
// after it restarted, and is deleted; /admin/reassign_partitions moves
// z-0 from [1 2] to [3 2] and is deleted when the move completes.
func TestOldToolsZNodes(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fast(0))
	createAssigned(t, cl, "p", [][]int32{{1, 2, 3}, {2, 3, 1}})
	createAssigned(t, cl, "z", [][]int32{{1, 2}})
	z := cl.Brokers[0].ZK()
	waitStates(t, cl, z, "p", 2, "all in the ISR", allInISR(3))
	cl.Broker(1).Restart()
	ss := waitStates(t, cl, z, "p", 2, "broker 1 back in the ISR", allInISR(3))
	if ss[0].Leader == 1 {
		t.Fatalf("p-0 still led by 1 after its restart: %+v", ss[0])
	}
	create := func(path string, v any) {
		t.Helper()
		data, _ := json.Marshal(v)
		if _, err := z.Create(cl.Brokers[0].Path(path), data, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", path, err)
		}
	}
	gone := func(path string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if ok, _, _ := z.Exists(cl.Brokers[0].Path(path)); !ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never deleted", path)
			}
		}
	}
	create("/admin/preferred_replica_election", map[string]any{"version": 1,
		"partitions": []map[string]any{{"topic": "p", "partition": 0}}})
	waitStates(t, cl, z, "p", 2, "p-0 led by 1 again", func(ss []partitionState) bool { return ss[0].Leader == 1 })
	gone("/admin/preferred_replica_election")

	waitStates(t, cl, z, "z", 1, "both in the ISR", allInISR(2))
	create("/admin/reassign_partitions", map[string]any{"version": 1,
		"partitions": []map[string]any{{"topic": "z", "partition": 0, "replicas": []int32{3, 2}}}})
	waitStates(t, cl, z, "z", 1, "ISR {2,3}", func(ss []partitionState) bool {
		isr := slices.Clone(ss[0].ISR)
		slices.Sort(isr)
		return slices.Equal(isr, []int32{2, 3})
	})
	gone("/admin/reassign_partitions")
	data, _, err := z.Get(cl.Brokers[0].Path("/brokers/topics/z"))
	var tz zkmeta.TopicZNode
	if err == nil {
		err = json.Unmarshal(data, &tz)
	}
	if err != nil || !slices.Equal(tz.Partitions["0"], []int32{3, 2}) || len(tz.AddingReplicas) != 0 {
		t.Fatalf("z after the move: %s %v", data, err)
	}
}
