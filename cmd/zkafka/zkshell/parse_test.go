package zkshell

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestSplitLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{`create /a "two words" world:anyone:r`, []string{"create", "/a", "two words", "world:anyone:r"}},
		{`set /a 'it"s'`, []string{"set", "/a", `it"s`}},
		{"  ls   -R  / ", []string{"ls", "-R", "/"}},
		{`set /a ""`, []string{"set", "/a", ""}},
	} {
		if got := splitLine(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestParseOptions(t *testing.T) {
	opts, args, err := parseOptions("sv:", []string{"-s", "/a", "-v", "3", "data"})
	if err != nil || opts['v'] != "3" || !slices.Equal(args, []string{"/a", "data"}) {
		t.Errorf("got %v %q %v", opts, args, err)
	}
	if _, _, err := parseOptions("s", []string{"-x"}); err == nil || !strings.Contains(err.Error(), "Unrecognized option: -x") {
		t.Errorf("-x: %v", err)
	}
	if _, _, err := parseOptions("v:", []string{"/a", "-v"}); err == nil || !strings.Contains(err.Error(), "Missing argument") {
		t.Errorf("-v without a value: %v", err)
	}
	// A negative number is an argument (set /a -1), not an option.
	if _, args, err := parseOptions("s", []string{"/a", "-1"}); err != nil || !slices.Equal(args, []string{"/a", "-1"}) {
		t.Errorf("-1: %q %v", args, err)
	}
}

func TestParseACL(t *testing.T) {
	acl, err := parseACL("digest:user1:GMJqCvSAmNfv41XqBotWHO0HsNc=:r,world:anyone:cdrwa")
	want := []zk.ACL{{Perms: zk.PermRead, Scheme: "digest", ID: "user1:GMJqCvSAmNfv41XqBotWHO0HsNc="}, {Perms: zk.PermAll, Scheme: "world", ID: "anyone"}}
	if err != nil || !slices.Equal(acl, want) {
		t.Errorf("got %v %v", acl, err)
	}
	for _, bad := range []string{"world:anyone", "world:anyone:rx"} {
		if _, err := parseACL(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if got := permString(zk.PermAll); got != "cdrwa" {
		t.Errorf("permString = %q", got)
	}
}

func TestParseServerAndChroot(t *testing.T) {
	hosts, chroot, err := parseServer("a:1,b/app/x")
	if err != nil || !slices.Equal(hosts, []string{"a:1", "b:2181"}) || chroot != "/app/x" {
		t.Fatalf("got %q %q %v", hosts, chroot, err)
	}
	s := &Shell{chroot: chroot}
	for p, abs := range map[string]string{"/": "/app/x", "/n": "/app/x/n"} {
		if s.abs(p) != abs || s.rel(abs) != p {
			t.Errorf("%s: abs %s rel %s", p, s.abs(p), s.rel(abs))
		}
	}
	for _, bad := range []string{"a:1/", "a:1/x/", ",a:1"} {
		if _, c, err := parseServer(bad); err == nil && c != "" {
			t.Errorf("%q: chroot %q, no error", bad, c)
		}
	}
}

func TestJavaDate(t *testing.T) {
	ms := time.Date(2026, 12, 1, 9, 52, 31, 0, time.Local).UnixMilli()
	want := time.UnixMilli(ms).Format("Mon Jan 02 15:04:05 MST 2006")
	if got := javaDate(ms); got != want || !strings.HasPrefix(got, "Tue Dec 01 09:52:31 ") {
		t.Errorf("javaDate = %q", got)
	}
}

// TestCompletion: the first word completes from the command names, a
// path from the children of its parent, chroot or not.
func TestCompletion(t *testing.T) {
	addr := startServer(t)
	var out bytes.Buffer
	s, err := Dial(addr, 10*time.Second, &out, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, line := range []string{"create /app a", "create /app/alpha 1", "create /app/beta 2", "create /app/alpine 3"} {
		if err := s.Run(line); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out.String())
		}
	}
	c := completer{s}
	for _, tc := range []struct {
		line  string
		want  []string
		share int
	}{
		{"getA", []string{"cl", "llChildrenNumber"}, 4},
		{"ls /ap", []string{"p"}, 2},
		{"get /app/al", []string{"pha", "pine"}, 2},
		{"get /app/", []string{"alpha", "alpine", "beta"}, 0},
		{"set /app x", nil, 0},
	} {
		cands, share := c.Do([]rune(tc.line), len([]rune(tc.line)))
		var got []string
		for _, r := range cands {
			got = append(got, string(r))
		}
		if !slices.Equal(got, tc.want) || share != tc.share {
			t.Errorf("%q: %q (%d), want %q (%d)", tc.line, got, share, tc.want, tc.share)
		}
	}
	chrooted, err := Dial(addr+"/app", 10*time.Second, &out, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer chrooted.Close()
	if cands, _ := (completer{chrooted}).Do([]rune("get /b"), 6); len(cands) != 1 || string(cands[0]) != "eta" {
		t.Errorf("chroot: %q", cands)
	}
}

// TestChrootEvents: a shell under a chroot sees its own paths in events
// and in getEphemerals.
func TestChrootEvents(t *testing.T) {
	addr := startServer(t)
	var out bytes.Buffer
	root, err := Dial(addr, 10*time.Second, &out, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	root.Run("create /jail")
	s, err := Dial(addr+"/jail", 10*time.Second, &out, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out.Reset()
	for _, line := range []string{"create -e /e x", "get -w /e", "set /e y", "getEphemerals /"} {
		s.Run(line)
	}
	want := "Created /e\nx\n\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/e\n[/e]\n"
	if out.String() != want {
		t.Errorf("got %q\nwant %q", out.String(), want)
	}
}

func TestClientConfig(t *testing.T) {
	cfg := "server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\nserver.2=h2:2888:3888:participant;h2:2182\nversion=100000000"
	if got, want := clientConfig(cfg), "100000000 localhost:2181,h2:2182"; got != want {
		t.Errorf("clientConfig = %q, want %q", got, want)
	}
}

// TestCloseAndConnect: after close a command says "Not connected", as
// zkCli does; connect opens a new session (on the same server without an
// argument) and the commands work again.
func TestCloseAndConnect(t *testing.T) {
	addr := startServer(t)
	var out syncBuffer
	s, err := Dial(addr, 10*time.Second, &out, &out, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	closed := "\nWATCHER::\n\nWatchedEvent state:Closed type:None path:null\n"
	connected := "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n"
	for deadline := time.Now().Add(10 * time.Second); out.String() != connected; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the first session event never came; got %q", out.String())
		}
	}
	for _, tc := range []struct{ line, want string }{
		{"create -e /eph x", "Created /eph\n"},
		{"close", closed},
		{"ls /", "Not connected\n"},
		{"history", "0 - create -e /eph x\n1 - close\n2 - ls /\n3 - history\n"},
		{"connect", connected},
		{"ls /", "[zookeeper]\n"},
		{"connect " + addr + "/zookeeper", closed + connected},
		{"ls /", "[config, quota]\n"},
	} {
		out.Reset()
		s.Run(tc.line)
		if out.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.line, out.String(), tc.want)
		}
	}
}

// TestJSONOutput: -o json prints ls, get and stat as one JSON object a
// line, with zkCli's stat field names.
func TestJSONOutput(t *testing.T) {
	addr := startServer(t)
	var out bytes.Buffer
	s, err := Dial(addr, 10*time.Second, &out, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Run("create /j data")
	s.json = true
	for _, line := range []string{"stat /j", "get -s /j", "ls -s /", "ls -R /j"} {
		out.Reset()
		s.Run(line)
		var got struct {
			Path     string
			Data     *string
			Children []string
			Paths    []string
			Stat     *struct {
				DataLength  int32 `json:"dataLength"`
				NumChildren int32 `json:"numChildren"`
				Czxid       int64 `json:"cZxid"`
			}
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil || strings.Count(out.String(), "\n") != 1 {
			t.Fatalf("%s: %q: %v", line, out.String(), err)
		}
		switch line {
		case "stat /j", "get -s /j":
			if got.Stat == nil || got.Stat.DataLength != 4 || got.Stat.Czxid == 0 || (line == "get -s /j" && (got.Data == nil || *got.Data != "data")) {
				t.Errorf("%s: %q", line, out.String())
			}
		case "ls -s /":
			if !slices.Equal(got.Children, []string{"j", "zookeeper"}) || got.Stat == nil || got.Stat.NumChildren != 2 {
				t.Errorf("%s: %q", line, out.String())
			}
		case "ls -R /j":
			if !slices.Equal(got.Paths, []string{"/j"}) {
				t.Errorf("%s: %q", line, out.String())
			}
		}
	}
}
