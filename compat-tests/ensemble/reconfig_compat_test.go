//go:build compat

package ensemble

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

var configVersion = regexp.MustCompile(`version=[0-9a-f]+`)

// TestReconfigZkCliApacheVsZkafka runs the same zkCli.sh reconfig session
// against a 3-server Apache ZooKeeper ensemble and a zkafka one, both with
// reconfigEnabled and a super user: a refusal without admin rights, a
// follower made an observer and a participant again, a stale -v, a -members of the
// same servers, a config left with one participant; the output of every
// command (the new /zookeeper/config after each change) must match, ports,
// config versions (zxids) and server ids aside: each run names its servers
// by role (leader, client's follower, target follower), so the two
// ensembles need not have elected the same myid.
func TestReconfigZkCliApacheVsZkafka(t *testing.T) {
	sum := sha1.Sum([]byte("super:secret"))
	opts := zkserver.EnsembleOptions{
		Options: zkserver.Options{StartTimeout: 60 * time.Second, ExtraConfig: []string{
			"reconfigEnabled=true",
			"DigestAuthenticationProvider.superDigest=super:" + base64.StdEncoding.EncodeToString(sum[:]),
		}},
		Voters: 3,
	}
	a := zkserver.NewApacheEnsemble(t, opts)
	b := zkserver.NewZkafkaEnsemble(t, opts)
	a.StartAll()
	b.StartAll()
	want := runReconfigScript(t, a)
	got := runReconfigScript(t, b)
	for i := range want.out {
		t.Logf("> %s\n%s", want.cmds[i], strings.Join(want.out[i], "\n"))
		if fmt.Sprint(got.out[i]) != fmt.Sprint(want.out[i]) {
			t.Errorf("%s\n  apache: %q\n  zkafka: %q", want.cmds[i], want.out[i], got.out[i])
		}
	}
}

type scriptRun struct {
	cmds []string
	out  [][]string
}

// runReconfigScript builds the script from e's own server lines (its
// ports) and runs it on a follower; the server whose role changes is the
// other follower (Apache ZooKeeper restarts a server whose role changes,
// dropping its clients, and the session would lose its connection). The
// output names the servers by role (server.L, server.C, server.T).
func runReconfigScript(t *testing.T, e *zkserver.Ensemble) scriptRun {
	t.Helper()
	lead := stableLeader(t, e)
	var follower []int
	for id := 1; id <= 3; id++ {
		if id != lead {
			follower = append(follower, id)
		}
	}
	client, target := follower[0], follower[1]
	c := dial(t, e.Addrs()[client-1:client], 10*time.Second)
	data, _, err := c.Get("/zookeeper/config")
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	line := func(id int, role string) string {
		return strings.Replace(lines[id-1], ":participant;", ":"+role+";", 1)
	}
	cmds := []string{
		fmt.Sprintf("reconfig -remove %d", target),
		"addauth digest super:secret",
		"reconfig -add " + line(target, "observer"),
		"config",
		"reconfig -add " + line(target, "participant"),
		fmt.Sprintf("reconfig -v 12345 -remove %d", target),
		"reconfig -members " + strings.Join([]string{line(1, "participant"), line(2, "participant"), line(3, "participant")}, ","),
		"config",
		fmt.Sprintf("reconfig -remove %d,%d", client, target),
		"reconfig -add server.4=127.0.0.1:1:2",
	}
	out := zkserver.RunZkCli(t, e.Addrs()[client-1], cmds)
	role := map[string]string{fmt.Sprint(lead): "L", fmt.Sprint(client): "C", fmt.Sprint(target): "T"}
	for i := range out {
		for j, l := range out[i] {
			l = configVersion.ReplaceAllString(string(normalizePorts("/zookeeper/config", []byte(l))), "version=V")
			out[i][j] = serverID.ReplaceAllStringFunc(l, func(m string) string {
				return "server." + role[strings.TrimSuffix(strings.TrimPrefix(m, "server."), "=")] + "="
			})
		}
		sortServerLines(out[i])
	}
	return scriptRun{cmds: cmds, out: out}
}

// stableLeader returns e's leader once it has led for 2 s (bounded):
// zkafka's newly elected leader may hand over to a higher id within two
// election timeouts (1 s at tickTime 2000), and a leader changing under
// the script would change its output.
func stableLeader(t *testing.T, e *zkserver.Ensemble) int {
	t.Helper()
	lead, since := int(e.WaitLeader(60*time.Second).ID()), time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Since(since) < 2*time.Second && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		if now := int(e.WaitLeader(60 * time.Second).ID()); now != lead {
			lead, since = now, time.Now()
		}
	}
	return lead
}

var serverID = regexp.MustCompile(`server\.[0-9]+=`)

// sortServerLines orders each run of server lines by their (role) names,
// as a config lists its servers by id.
func sortServerLines(lines []string) {
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], "server.") {
			j++
		}
		sort.Strings(lines[i:j])
		i = j + 1
	}
}
