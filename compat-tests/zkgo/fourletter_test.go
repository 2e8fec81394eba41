package zkgo

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// mntrValue returns the value of key in a mntr answer, or "(absent)".
func mntrValue(mntr, key string) string {
	for _, l := range strings.Split(mntr, "\n") {
		if k, v, ok := strings.Cut(l, "\t"); ok && k == key {
			return v
		}
	}
	return "(absent)"
}

// TestFourLetterWordValues checks the values Apache ZooKeeper 3.8 gives
// for a known state (the differential run compares the same against a real
// server): the root counts twice in the node count, the approximate data
// size is paths plus data, reads and writes are counted per top-level znode,
// wchs counts data watches only while zk_watch_count counts both tables,
// and cons shows the asking connection and the session's last operation.
func TestFourLetterWordValues(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(5 * time.Second)
	acl := zk.WorldACL(zk.PermAll)
	if _, err := c.Create("/a", []byte("hello"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/a/e", []byte("x"), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW("/a"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.ChildrenW("/a"); err != nil {
		t.Fatal(err)
	}
	mntr := fourLetter(t, ts.addr, "mntr")
	for key, want := range map[string]any{
		"zk_znode_count":                 7,          // 6 znodes, the root twice
		"zk_approximate_data_size":       44 + 7 + 5, // system nodes, /a + "hello", /a/e + "x"
		"zk_watch_count":                 2,          // a data and a child watch
		"zk_ephemerals_count":            1,
		"zk_cnt_a_write_per_namespace":   2,
		"zk_sum_a_write_per_namespace":   7 + 5,
		"zk_cnt_a_read_per_namespace":    2,                // getData and getChildren
		"zk_sum_a_read_per_namespace":    2*(2+68) + 5 + 1, // paths, stats, data, child names
		"zk_avg_a_read_per_namespace":    "73.0",
		"zk_connection_drop_probability": "0.0",
		"zk_synced_followers":            "(absent)", // a leader's key
	} {
		if got := mntrValue(mntr, key); got != fmt.Sprint(want) {
			t.Errorf("mntr %s = %s, want %v", key, got, want)
		}
	}
	if n := strings.Count(mntr, "\n"); n != 485+10 {
		t.Errorf("mntr has %d lines, want the 485 keys of Apache ZooKeeper 3.8 and 10 per-namespace ones", n)
	}
	if got := fourLetter(t, ts.addr, "wchs"); got != "1 connections watching 1 paths\nTotal watches:1\n" {
		t.Errorf("wchs (the data watch table only): %q", got)
	}
	cons := fourLetter(t, ts.addr, "cons")
	for _, want := range []string{"[0](queued=0,recved=1,sent=0)\n", ",lop=GETC,", ",lcxid=0x", ",lzxid=0x", ",avglat="} {
		if !strings.Contains(cons, want) {
			t.Errorf("cons lacks %q:\n%s", want, cons)
		}
	}
	stat := fourLetter(t, ts.addr, "stat")
	if !strings.Contains(stat, "Node count: 7\n") || strings.Contains(stat, "sid=") {
		t.Errorf("stat: node count 7 and connections in brief expected:\n%s", stat)
	}
	dump := fourLetter(t, ts.addr, "dump")
	for _, want := range []string{"Session Sets (1)/(1):\n", " expire at ", "Sessions with Ephemerals (1):\n", "\t/a/e\n", "Connections dump:\nConnections Sets ("} {
		if !strings.Contains(dump, want) {
			t.Errorf("dump lacks %q:\n%s", want, dump)
		}
	}
	envi := fourLetter(t, ts.addr, "envi")
	for _, key := range []string{"java.version=", "java.home=", "java.class.path=", "os.name=", "os.version=", "user.name=", "os.memory.free=", "os.memory.max=", "os.memory.total="} {
		if !strings.Contains(envi, "\n"+key) {
			t.Errorf("envi lacks %s:\n%s", key, envi)
		}
	}
}

// TestDumpListsSessionWithDeletedEphemerals: ZooKeeper's dump lists a
// session that created an ephemeral even after the node was deleted (with
// no paths), until the session closes (DataTree.ephemerals keeps the
// session's empty set). The differential run with seed 2 showed it.
func TestDumpListsSessionWithDeletedEphemerals(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(5 * time.Second)
	if _, err := c.Create("/e", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/e", -1); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Sessions with Ephemerals (1):\n0x%x:\nConnections dump:", c.SessionID())
	if dump := fourLetter(t, ts.addr, "dump"); !strings.Contains(dump, want) {
		t.Fatalf("dump lacks %q:\n%s", want, dump)
	}
	c.Close()
	other, _ := ts.connect(5 * time.Second)
	defer other.Close()
	want = "Sessions with Ephemerals (0):\nConnections dump:"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		dump := fourLetter(t, ts.addr, "dump")
		if strings.Contains(dump, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the close, dump lacks %q:\n%s", want, dump)
		}
	}
}
