package kafkatool

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestClusterEnsemble: given one server of a three-server zkafka
// ensemble with no broker, cluster lists all three members (from
// /zookeeper/config) with their roles: one leader, two followers.
func TestClusterEnsemble(t *testing.T) {
	e := zkserver.NewZkafkaEnsemble(t, zkserver.EnsembleOptions{Voters: 3,
		Options: zkserver.Options{TickTime: 200 * time.Millisecond}})
	e.StartAll()
	e.WaitLeader(30 * time.Second)
	h := decode[struct {
		Brokers   []any `json:"brokers"`
		ZooKeeper []struct {
			Address string `json:"address"`
			Mode    string `json:"mode"`
		} `json:"zookeeper"`
	}](t, run(t, "", "cluster", "--zookeeper", e.Addrs()[0], "-o", "json"))
	var modes, addrs []string
	for _, s := range h.ZooKeeper {
		modes, addrs = append(modes, s.Mode), append(addrs, s.Address)
	}
	sort.Strings(modes)
	want := e.Addrs()
	sort.Strings(want)
	sort.Strings(addrs)
	if strings.Join(modes, ",") != "follower,follower,leader" || strings.Join(addrs, ",") != strings.Join(want, ",") {
		t.Errorf("ensemble: %+v (servers %v)", h.ZooKeeper, want)
	}
	if len(h.Brokers) != 0 {
		t.Errorf("brokers %v", h.Brokers)
	}
	if out := run(t, "", "cluster", "--zookeeper", e.Addrs()[1]); !strings.Contains(out, "no brokers registered") || !strings.Contains(out, "leader") {
		t.Errorf("table:\n%s", out)
	}
}
