//go:build compat

package ensemble

import (
	"crypto/sha1"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestReconfigUnderLoad grows a 3-server zkafka ensemble to 5 with zkCli's
// reconfig -add while clients write, serves writes through a new server,
// shrinks back to 3 with -remove, and makes a voter an observer and a
// voter again; porcupine checks the clients' history.
func TestReconfigUnderLoad(t *testing.T) {
	sum := sha1.Sum([]byte("super:secret"))
	e := zkserver.NewZkafkaEnsemble(t, zkserver.EnsembleOptions{
		Options: zkserver.Options{TickTime: tickTime, StartTimeout: 30 * time.Second, ExtraConfig: []string{
			"reconfigEnabled=true",
			"DigestAuthenticationProvider.superDigest=super:" + base64.StdEncoding.EncodeToString(sum[:]),
		}},
		Voters: 5, InitialMembers: 3,
	})
	for _, s := range e.Servers {
		s.Launch()
	}
	for _, s := range e.Servers[:3] {
		s.WaitReady()
	}
	three := &zkserver.Ensemble{Servers: e.Servers[:3]}
	lin := startLin(t, three, []string{"/k1", "/k2", "/k3"}, 6)

	line := serverLines(t, e.Servers[4])
	run := func(cmd, want string) {
		t.Helper()
		out := zkserver.RunZkCli(t, e.Addrs()[0], []string{"addauth digest super:secret", cmd})
		if got := strings.Join(out[1], "\n"); !strings.Contains(got, want) {
			t.Fatalf("%s:\n%s\nwant %q", cmd, got, want)
		}
	}
	run("reconfig -add "+line[4]+","+line[5], line[5])
	e.Servers[3].WaitReady()
	e.Servers[4].WaitReady()
	c4 := dial(t, e.Addrs()[3:4], 4*time.Second)
	if _, err := c4.Create("/via4", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("write through server 4: %v", err)
	}
	c4.Close()

	run("reconfig -remove 4,5", "version=")
	run("reconfig -add "+strings.Replace(line[3], ":participant;", ":observer;", 1), ":observer;")
	run("reconfig -add "+line[3], "version=")
	c1 := dial(t, e.Addrs()[:1], 4*time.Second)
	data, _, err := c1.Get("/zookeeper/config")
	c1.Close()
	if err != nil || strings.Contains(string(data), "server.4=") || strings.Contains(string(data), ":observer;") {
		t.Fatalf("final config %q, %v", data, err)
	}
	lin.finish(t, "reconfig 3 -> 5 -> 3, voter -> observer -> voter")
}

// serverLines reads the server.N lines (ZooKeeper's format) of s's zoo.cfg.
func serverLines(t *testing.T, s *zkserver.Server) map[int]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir(), "zoo.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, l := range strings.Split(string(b), "\n") {
		for id := 1; id <= 5; id++ {
			if strings.HasPrefix(l, "server."+string(rune('0'+id))+"=") {
				out[id] = l
			}
		}
	}
	return out
}
