//go:build compat

package zkimport

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/cmd/zkafka/zkdata"
	"github.com/zkafka/zkafka/compat-tests/zkserver"
	"github.com/zkafka/zkafka/quorum"
	"github.com/zkafka/zkafka/store/apachezk"
)

var apacheOpts = zkserver.Options{
	ExtendedTypes:          true,
	ContainerCheckInterval: 500 * time.Millisecond,
	// Small snapshots and logs: a snapshot every 10..20 txns, logs
	// preallocated 16 KiB at a time (the fixtures are checked in).
	ExtraConfig: []string{"snapCount=20", "preAllocSize=16"},
}

// TestImportExportApache is the scenario end to end: Apache writes
// a data directory with every txn type, a torn log, a restart, snapshots
// and open sessions; zkafka imports it and must answer as Apache does on
// the same directory; zkafka's export must load in Apache with the same
// answers again.
func TestImportExportApache(t *testing.T) {
	src := zkserver.StartApache(t, apacheOpts)
	scriptEveryOp(t, src.Addr(), "ops")
	waitGone(t, src.Addr(), "/ops/container")
	writeLoad(t, src.Addr(), "/before-kill", 15)
	src.Kill()
	tearLastLog(t, filepath.Join(src.Dir(), "data", "version-2"))
	src.Restart()
	writeLoad(t, src.Addr(), "/after-restart", 60)
	scriptEveryOp(t, src.Addr(), "ops2")
	waitGone(t, src.Addr(), "/ops2/container")
	held := holdEphemerals(t, src.Addr(), "/ops2/eph")
	defer held.Close()
	writeLoad(t, src.Addr(), "/last-log", 5)
	src.Kill() // the held session stays in the files
	tearLastLog(t, filepath.Join(src.Dir(), "data", "version-2"))
	srcData := filepath.Join(src.Dir(), "data")
	if out := os.Getenv("ZKAFKA_WRITE_FIXTURES"); out != "" {
		copyDir(t, filepath.Join(srcData, "version-2"), out)
	}

	ref := apacheOn(t, srcData)
	zcfg, zk1 := zkafkaImport(t, srcData, true)
	compareTrees(t, "zkafka after import", ref.Addr(), zk1.Addr().String())
	compareDump(t, "zkafka after import", ref.Addr(), zk1.Addr().String())
	if err := zk1.Close(); err != nil {
		t.Fatal(err)
	}

	exported := t.TempDir()
	var out bytes.Buffer
	if err := zkdata.RunExport(&out, zcfg, exported); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	back := apacheOn(t, exported)
	compareTrees(t, "Apache on zkafka's export", ref.Addr(), back.Addr())
	compareDump(t, "Apache on zkafka's export", ref.Addr(), back.Addr())

	// zkafka restarts on the imported data and gives out larger zxids.
	checkNewZxids(t, startZkafka(t, zcfg).Addr().String(), srcData)
}

// checkNewZxids writes through zkafka and checks that the write's zxid is
// above every zxid of the imported files.
func checkNewZxids(t *testing.T, addr, dir string) {
	dt, _, err := apachezk.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, addr, 10*time.Second)
	defer c.Close()
	if _, err := c.Create("/after-import", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, st, err := c.Get("/after-import")
	if err != nil {
		t.Fatal(err)
	}
	if st.Czxid <= dt.LastZxid {
		t.Errorf("a write after the import has zxid 0x%x, not above the last imported 0x%x", st.Czxid, dt.LastZxid)
	}
	if err := c.Delete("/after-import", -1); err != nil {
		t.Fatal(err)
	}
}

// apacheOn starts Apache ZooKeeper on a copy of the data directory dir.
func apacheOn(t *testing.T, dir string) *zkserver.Server {
	s := zkserver.StartApache(t, apacheOpts)
	s.Kill()
	data := filepath.Join(s.Dir(), "data")
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	copyDir(t, filepath.Join(dir, "version-2"), filepath.Join(data, "version-2"))
	s.Restart()
	return s
}

// zkafkaImport imports a copy of dir into a new zkafka data directory with
// zk-import's code and starts a zkafka ZooKeeper server on it.
func zkafkaImport(t *testing.T, dir string, wantTorn bool) (quorum.Config, *quorum.Server) {
	src := t.TempDir()
	copyDir(t, filepath.Join(dir, "version-2"), filepath.Join(src, "version-2"))
	base := t.TempDir()
	cfgPath := filepath.Join(base, "zoo.cfg")
	cfgText := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=2181\nextendedTypesEnabled=true\n4lw.commands.whitelist=*\nadmin.enableServer=false\n", filepath.Join(base, "data"))
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := quorum.LoadConfig(cfgPath, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := zkdata.RunImport(&out, src, cfg); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if wantTorn && !strings.Contains(out.String(), "torn log") {
		t.Errorf("the import did not report the torn log:\n%s", out.String())
	}
	return cfg, startZkafka(t, cfg)
}

// startZkafka starts a zkafka ZooKeeper server with cfg on 127.0.0.1:0.
func startZkafka(t *testing.T, cfg quorum.Config) *quorum.Server {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := quorum.StartWithListener(cfg, slog.New(slog.DiscardHandler), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// tearLastLog cuts the newest log file inside its last entry, as a crash
// during the write leaves it.
func tearLastLog(t *testing.T, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "log.*"))
	if len(logs) == 0 {
		t.Fatal("no log file")
	}
	slices.SortFunc(logs, func(a, b string) int { return cmpHex(a, b) })
	last := logs[len(logs)-1]
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	end := len(bytes.TrimRight(b, "\x00"))
	if end < 16+20 || b[end-1] != 'B' {
		t.Fatalf("%s: no entry to tear (data ends at %d)", last, end)
	}
	if err := os.Truncate(last, int64(end-7)); err != nil {
		t.Fatal(err)
	}
}

func cmpHex(a, b string) int {
	var x, y uint64
	fmt.Sscanf(filepath.Ext(a)[1:], "%x", &x)
	fmt.Sscanf(filepath.Ext(b)[1:], "%x", &y)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func waitGone(t *testing.T, addr, path string) {
	c := connect(t, addr, 10*time.Second)
	defer c.Close()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok, _, err := c.Exists(path); err == nil && !ok {
			return
		}
	}
	t.Fatalf("%s still exists", path)
}

// compareTrees walks both servers from / and compares every znode's
// data, ACL and stat, and the children lists.
func compareTrees(t *testing.T, what, want, got string) {
	a := connect(t, want, 10*time.Second)
	defer a.Close()
	b := connect(t, got, 10*time.Second)
	defer b.Close()
	for _, c := range []*zk.Conn{a, b} {
		if err := c.AddAuth("digest", []byte("alice:secret")); err != nil {
			t.Fatal(err)
		}
	}
	queue, n := []string{"/"}, 0
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		n++
		wd, ws, werr := a.Get(p)
		gd, gs, gerr := b.Get(p)
		if werr != nil || gerr != nil {
			t.Errorf("%s: get %s: Apache %v, zkafka side %v", what, p, werr, gerr)
			continue
		}
		if !bytes.Equal(wd, gd) || (wd == nil) != (gd == nil) {
			t.Errorf("%s: %s data %q, want %q", what, p, gd, wd)
		}
		if *ws != *gs {
			t.Errorf("%s: %s stat\n got %+v\nwant %+v", what, p, *gs, *ws)
		}
		wa, _, _ := a.GetACL(p)
		ga, _, _ := b.GetACL(p)
		if fmt.Sprint(wa) != fmt.Sprint(ga) {
			t.Errorf("%s: %s ACL %v, want %v", what, p, ga, wa)
		}
		wk, _, _ := a.Children(p)
		gk, _, _ := b.Children(p)
		slices.Sort(wk)
		slices.Sort(gk)
		if !slices.Equal(wk, gk) {
			t.Errorf("%s: %s children %v, want %v", what, p, gk, wk)
		}
		for _, k := range wk {
			if p == "/zookeeper" && k == "config" {
				continue
			}
			queue = append(queue, strings.TrimSuffix(p, "/")+"/"+k)
		}
	}
	t.Logf("%s: %d znodes compared", what, n)
	if n < 100 {
		t.Errorf("%s: only %d znodes", what, n)
	}
}

// compareDump compares the sessions with ephemerals that dump lists.
func compareDump(t *testing.T, what, want, got string) {
	w := ephemeralsOf(t, want)
	g := ephemeralsOf(t, got)
	if w != g {
		t.Errorf("%s: sessions with ephemerals\n got %s\nwant %s", what, g, w)
	}
	if !strings.Contains(w, "/ops2/eph-held") {
		t.Errorf("the held ephemeral is missing from Apache's dump: %s", w)
	}
}

func ephemeralsOf(t *testing.T, addr string) string {
	out, err := zkserver.FourLetterWord(addr, "dump", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(out, "Sessions with Ephemerals")
	if !ok {
		t.Fatalf("dump of %s has no ephemerals part:\n%s", addr, out)
	}
	rest, _, _ = strings.Cut(rest, "Connections dump")
	return strings.Join(strings.Fields(rest), " ")
}

func copyDir(t *testing.T, from, to string) {
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if de.IsDir() {
			continue
		}
		in, err := os.Open(filepath.Join(from, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		o, err := os.Create(filepath.Join(to, de.Name()))
		if err == nil {
			_, err = io.Copy(o, in)
			o.Close()
		}
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}
