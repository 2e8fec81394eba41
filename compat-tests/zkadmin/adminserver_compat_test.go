//go:build compat

package zkadmin

import (
	"encoding/json"
	"fmt"
	"github.com/zkafka/zkafka/internal/freeport"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// adminCommands are the primary names of Apache ZooKeeper 3.8's
// Commands.java.
var adminCommands = []string{
	"configuration", "connection_stat_reset", "connections", "dirs", "dump", "environment",
	"get_trace_mask", "hash", "initial_configuration", "is_read_only", "last_snapshot", "leader",
	"monitor", "observer_connection_stat_reset", "observers", "ruok", "server_stats",
	"set_trace_mask", "stat_reset", "stats", "system_properties", "voting_view",
	"watch_summary", "watches", "watches_by_path", "zabstate",
}

// opaque are keys whose value's own keys are data, not schema (session
// ids, paths, expiry times) or the platform's (Java's system properties).
var opaque = map[string]bool{
	"expiry_time_to_session_ids": true, "session_id_to_ephemeral_paths": true,
	"session_id_to_watched_paths": true, "path_to_session_ids": true, "system_properties": true,
}

type server struct {
	zk    *zkserver.Server
	admin string
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func start(t *testing.T, kind string) server {
	t.Helper()
	port := freePort(t)
	opts := zkserver.Options{ExtraConfig: []string{"admin.enableServer=true", "admin.serverAddress=127.0.0.1",
		fmt.Sprintf("admin.serverPort=%d", port)}}
	var s *zkserver.Server
	if kind == "apache" {
		s = zkserver.StartApache(t, opts)
	} else {
		s = zkserver.StartZkafka(t, opts)
	}
	srv := server{zk: s, admin: fmt.Sprintf("http://127.0.0.1:%d/commands", port)}
	waitAdmin(t, kind, srv, time.Now().Add(30*time.Second))
	return srv
}

// waitAdmin waits until s's AdminServer answers ruok.
func waitAdmin(t *testing.T, kind string, s server, deadline time.Time) {
	t.Helper()
	for {
		resp, err := http.Get(s.admin + "/ruok")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s AdminServer never answered: %v", kind, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// act gives the server a session with an ephemeral node and a watch,
// and keeps it open.
func act(t *testing.T, s server) {
	t.Helper()
	c, _, err := zk.Connect([]string{s.zk.Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if _, err := c.Create("/adm", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/adm/e", []byte("y"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW("/adm"); err != nil {
		t.Fatal(err)
	}
}

func command(t *testing.T, s server, name string) map[string]any {
	t.Helper()
	resp, err := http.Get(s.admin + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: HTTP %d", name, resp.StatusCode)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("%s: %v in %s", name, err, body)
	}
	return out
}

// shape lists the key paths of v ("server_stats.uptime:number",
// "connections[].session_id:number").
func shape(prefix string, v any, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if opaque[k] {
				out[p+":object"] = true
				continue
			}
			shape(p, x, out)
		}
	case []any:
		out[prefix+":array"] = true
		for _, x := range v {
			shape(prefix+"[]", x, out)
		}
	case nil:
		out[prefix+":null"] = true
	case string:
		out[prefix+":string"] = true
	case float64:
		out[prefix+":number"] = true
	case bool:
		out[prefix+":bool"] = true
	}
}

func diff(a, b map[string]bool) (onlyA []string) {
	for k := range a {
		if !b[k] && !strings.Contains(k, "_per_namespace") {
			onlyA = append(onlyA, k)
		}
	}
	sort.Strings(onlyA)
	return onlyA
}

// TestAdminServerApacheVsZkafka: the same session on both servers, then
// each command's keys, and the types of their values, compared.
func TestAdminServerApacheVsZkafka(t *testing.T) {
	apache, ours := start(t, "apache"), start(t, "zkafka")
	act(t, apache)
	act(t, ours)
	for _, name := range adminCommands {
		a, z := map[string]bool{}, map[string]bool{}
		ja, jz := command(t, apache, name), command(t, ours, name)
		if name == "system_properties" || name == "environment" {
			ja, jz = map[string]any{"command": ja["command"], "error": ja["error"]}, map[string]any{"command": jz["command"], "error": jz["error"]}
		}
		if ja["command"] != jz["command"] || ja["error"] != jz["error"] {
			t.Errorf("%s: command/error: Apache %v/%v, zkafka %v/%v", name, ja["command"], ja["error"], jz["command"], jz["error"])
		}
		shape("", ja, a)
		shape("", jz, z)
		t.Logf("%s: %d key paths on Apache, %d on zkafka", name, len(a), len(z))
		if d := diff(a, z); len(d) > 0 {
			t.Errorf("%s: only Apache has %v", name, d)
		}
		if d := diff(z, a); len(d) > 0 {
			t.Errorf("%s: only zkafka has %v", name, d)
		}
	}
	// environment: the same keys (zkafka says what the Go equivalent is).
	a, z := command(t, apache, "environment"), command(t, ours, "environment")
	for k := range a {
		if _, ok := z[k]; !ok {
			t.Errorf("environment: zkafka lacks %s", k)
		}
	}
}

// ensembleCommands are the commands whose answers depend on the server's
// role in an ensemble.
var ensembleCommands = []string{"leader", "voting_view", "zabstate", "monitor", "server_stats", "configuration", "observers", "is_read_only"}

// startEnsemble starts a 3-voter ensemble of kind with each member's
// AdminServer on a free port, and returns the leader's and a follower's.
func startEnsemble(t *testing.T, kind string) (leader, follower server) {
	t.Helper()
	opts := zkserver.EnsembleOptions{Voters: 3}
	var e *zkserver.Ensemble
	if kind == "apache" {
		e = zkserver.NewApacheEnsemble(t, opts)
	} else {
		e = zkserver.NewZkafkaEnsemble(t, opts)
	}
	admins := map[*zkserver.Server]string{}
	for _, s := range e.Servers {
		port := freePort(t)
		f, err := os.OpenFile(filepath.Join(s.Dir(), "zoo.cfg"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "admin.enableServer=true\nadmin.serverAddress=127.0.0.1\nadmin.serverPort=%d\n", port)
		f.Close()
		admins[s] = fmt.Sprintf("http://127.0.0.1:%d/commands", port)
	}
	e.StartAll()
	l := e.WaitLeader(60 * time.Second)
	if l == nil {
		t.Fatalf("%s ensemble: no leader", kind)
	}
	// The leader can be known before a follower has synced with it, and a
	// server's AdminServer can start after its client port: wait for both,
	// or a follower still LOOKING answers with another shape.
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, s := range e.Servers {
			if s != l && s.Mode() == "follower" {
				lead, follow := server{zk: l, admin: admins[l]}, server{zk: s, admin: admins[s]}
				waitAdmin(t, kind, lead, deadline)
				waitAdmin(t, kind, follow, deadline)
				return lead, follow
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s ensemble: no follower beside leader %d", kind, l.ID())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func compareShapes(t *testing.T, what string, apache, ours server, names []string) {
	t.Helper()
	for _, name := range names {
		a, z := map[string]bool{}, map[string]bool{}
		shape("", command(t, apache, name), a)
		shape("", command(t, ours, name), z)
		if d := diff(a, z); len(d) > 0 {
			t.Errorf("%s %s: only Apache has %v", what, name, d)
		}
		if d := diff(z, a); len(d) > 0 {
			t.Errorf("%s %s: only zkafka has %v", what, name, d)
		}
	}
}

// TestAdminServerEnsembleApacheVsZkafka: a leader's and a follower's
// answers to the role-dependent commands have Apache's keys.
func TestAdminServerEnsembleApacheVsZkafka(t *testing.T) {
	al, af := startEnsemble(t, "apache")
	zl, zf := startEnsemble(t, "zkafka")
	compareShapes(t, "leader", al, zl, ensembleCommands)
	compareShapes(t, "follower", af, zf, ensembleCommands)
	for _, s := range []server{al, zl} {
		if got := command(t, s, "leader"); got["is_leader"] != true {
			t.Errorf("%s leader: %v", s.zk.Kind(), got)
		}
	}
}
