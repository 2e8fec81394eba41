package kafkatool

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestTopicsUnhealthyFilters writes a topic's assignment into ZooKeeper
// by hand, as kafka-reassign-partitions or an old tool would: partition 0
// on brokers 0 and 7 (7 never registers: under-replicated), partition 1
// on broker 7 alone (no leader: offline). describe's filters and cluster
// see them.
func TestTopicsUnhealthyFilters(t *testing.T) {
	e := startEnv(t)
	z := e.ZK()
	data := `{"version":3,"partitions":{"0":[0,7],"1":[7]},"adding_replicas":{},"removing_replicas":{}}`
	if _, err := z.Create(e.Path("/brokers/topics/sick"), []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	bs := []string{"--bootstrap-server", e.Addr}
	checkFor(t, 20*time.Second, "the controller created topic sick", func() bool {
		d := decode[[]topicJSON](t, run(t, "", append([]string{"topics", "describe", "-o", "json"}, bs...)...))
		// Partition 0 is led by broker 0 once the controller has written
		// its state (before that no partition has a leader).
		return len(d) == 1 && len(d[0].Partitions) == 2 && d[0].Partitions[0].Leader == 0
	})
	under := decode[[]topicJSON](t, run(t, "", append([]string{"topics", "describe", "--under-replicated", "-o", "json"}, bs...)...))
	if len(under) != 1 || len(under[0].Partitions) < 1 || under[0].Partitions[0].Partition != 0 {
		t.Errorf("--under-replicated: %+v", under)
	}
	unavail := decode[[]topicJSON](t, run(t, "", append([]string{"topics", "describe", "--unavailable", "-o", "json"}, bs...)...))
	if len(unavail) != 1 || len(unavail[0].Partitions) != 1 || unavail[0].Partitions[0].Partition != 1 {
		t.Errorf("--unavailable: %+v", unavail)
	}
	h := decode[struct {
		UnderReplicated []partJSON `json:"under_replicated"`
		Offline         []partJSON `json:"offline"`
	}](t, run(t, "", append([]string{"cluster", "-o", "json"}, bs...)...))
	if len(h.UnderReplicated) != 1 || len(h.Offline) != 1 {
		t.Errorf("cluster: %+v", h)
	}
}
