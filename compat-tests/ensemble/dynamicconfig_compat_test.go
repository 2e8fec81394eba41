//go:build compat

package ensemble

import (
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestDynamicConfigFileApacheVsZkafka starts a 3-server ensemble (two
// participants, one observer) of each kind from zoo.cfg.dynamic.100000000
// files, as ZooKeeper 3.5+ writes them: /zookeeper/config must read the
// same on every server of both (ports aside), version=100000000 included.
func TestDynamicConfigFileApacheVsZkafka(t *testing.T) {
	opts := zkserver.EnsembleOptions{
		Options:           zkserver.Options{StartTimeout: 60 * time.Second},
		Voters:            2,
		Observers:         1,
		DynamicConfigFile: 0x100000000,
	}
	a := zkserver.NewApacheEnsemble(t, opts)
	b := zkserver.NewZkafkaEnsemble(t, opts)
	a.StartAll()
	b.StartAll()
	configOf := func(e *zkserver.Ensemble) []string {
		var out []string
		for _, addr := range e.Addrs() {
			c := dial(t, []string{addr}, 10*time.Second)
			data, _, err := c.Get("/zookeeper/config")
			c.Close()
			if err != nil {
				t.Fatalf("get /zookeeper/config on %s: %v", addr, err)
			}
			out = append(out, string(normalizePorts("/zookeeper/config", data)))
		}
		return out
	}
	want, got := configOf(a), configOf(b)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("server %d: /zookeeper/config\n%s\nwant (Apache ZooKeeper)\n%s", i+1, got[i], want[i])
		}
	}
	t.Logf("/zookeeper/config:\n%s", want[0])
}
