package quorum

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// loadAdminKeys reads testdata/admin_command_keys.txt: the top-level keys
// of each command's JSON, as Apache ZooKeeper 3.8.0 answered them.
func loadAdminKeys(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open("testdata/admin_command_keys.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, keys, ok := strings.Cut(sc.Text(), ": ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		out[name] = strings.Fields(keys)
	}
	return out
}

func adminGet(t *testing.T, s *Server, path string) map[string]any {
	t.Helper()
	code, body := httpGet(t, "http://"+s.AdminAddr().String()+"/commands/"+path)
	if code != 200 {
		t.Fatalf("%s: HTTP %d %s", path, code, body)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%s: %v in %s", path, err, body)
	}
	return out
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if !strings.HasSuffix(k, "_per_namespace") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestAdminCommandKeys: every command Apache ZooKeeper serves answers with
// its keys (system_properties: Java's own, only command and error).
func TestAdminCommandKeys(t *testing.T) {
	s := startObservedServer(t)
	c := connectZK(t, s)
	if _, err := c.Create("/a", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	want := loadAdminKeys(t)
	if len(want) != len(adminCommands) {
		t.Errorf("Apache serves %d commands, zkafka %d", len(want), len(adminCommands))
	}
	for name, keys := range want {
		got := adminGet(t, s, name)
		if got["command"] != name {
			t.Errorf("%s: command = %v", name, got["command"])
		}
		if name == "system_properties" {
			continue
		}
		if g := keysOf(got); !slices.Equal(g, keys) {
			t.Errorf("%s: keys\n got %v\nwant %v", name, g, keys)
		}
	}
}

// TestAdminCommandValues: aliases, errors and values from the server.
func TestAdminCommandValues(t *testing.T) {
	s := startObservedServer(t)
	c := connectZK(t, s)
	for _, p := range []string{"/x", "/x/y"} {
		if _, err := c.Create(p, []byte("d"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := c.GetW("/x"); err != nil {
		t.Fatal(err)
	}
	mntr := adminGet(t, s, "mntr")
	if mntr["command"] != "monitor" || mntr["error"] != nil {
		t.Errorf("mntr alias: %v %v", mntr["command"], mntr["error"])
	}
	if mntr["znode_count"] != float64(znodeCount(s.tree.Load())) || mntr["server_state"] != "standalone" {
		t.Errorf("monitor: znode_count %v server_state %v", mntr["znode_count"], mntr["server_state"])
	}
	wchs := adminGet(t, s, "wchs")
	if wchs["num_total_watches"] != float64(1) || wchs["num_paths"] != float64(1) {
		t.Errorf("watch_summary: %v", wchs)
	}
	byPath := adminGet(t, s, "watches_by_path")["path_to_session_ids"].(map[string]any)
	if ids, _ := byPath["/x"].([]any); len(ids) != 1 || ids[0] != float64(c.SessionID()) {
		t.Errorf("watches_by_path: %v (session %d)", byPath, c.SessionID())
	}
	cons := adminGet(t, s, "cons")["connections"].([]any)
	if len(cons) != 1 || cons[0].(map[string]any)["session_id"] != float64(c.SessionID()) {
		t.Errorf("connections: %v", cons)
	}
	if got := adminGet(t, s, "nope"); got["error"] != "Unknown command: nope" {
		t.Errorf("unknown command: %v", got)
	}
	if got := adminGet(t, s, "stmk?traceMask=12"); got["tracemask"] != float64(12) {
		t.Errorf("set_trace_mask: %v", got)
	}
	if got := adminGet(t, s, "ruok"); got["error"] != nil {
		t.Errorf("ruok: %v", got)
	}
	code, body := httpGet(t, "http://"+s.AdminAddr().String()+"/commands")
	if code != 200 || !strings.Contains(body, `<a href="/commands/ruok">ruok</a>`) {
		t.Errorf("command list: %d %s", code, body)
	}
}

// TestAdminEnsembleCommands: a leader's leader, voting_view and zabstate
// answer with the keys Apache ZooKeeper's Jackson writes (snake_case; the
// addresses as MultipleAddresses objects).
func TestAdminEnsembleCommands(t *testing.T) {
	e := startInprocEnsemble(t, []bool{false, false, false})
	s := e.servers[e.waitLeader(t)]
	lead := s.runAdminCommand("leader", nil)
	if lead["is_leader"] != true || lead["leader_id"] != s.cfg.MyID || lead["error"] != nil {
		t.Errorf("leader: %v", lead)
	}
	view := s.runAdminCommand("voting_view", nil)["current_config"].(map[string]any)
	if len(view) != 3 {
		t.Fatalf("voting_view: %v", view)
	}
	for id, v := range view {
		m := v.(map[string]any)
		for _, k := range []string{"server_addresses", "election_addresses", "client_address", "learner_type"} {
			if _, ok := m[k]; !ok {
				t.Errorf("voting_view %s lacks %s: %v", id, k, m)
			}
		}
	}
	zab := s.runAdminCommand("zabstate", nil)
	if zab["zabstate"] != "broadcast" || zab["voting"] != true {
		t.Errorf("zabstate: %v", zab)
	}
	if qa, ok := zab["quorum_address"].(map[string]any); !ok || qa["one"] == nil {
		t.Errorf("zabstate quorum_address: %v", zab["quorum_address"])
	}
}
