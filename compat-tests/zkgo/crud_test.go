package zkgo

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/quorum"
)

var openACL = zk.WorldACL(zk.PermAll)

func TestCreateGetSetDelete(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(5 * time.Second)

	path, err := c.Create("/a", []byte("one"), 0, openACL)
	if err != nil || path != "/a" {
		t.Fatalf("create: %q %v", path, err)
	}
	if _, err := c.Create("/a", nil, 0, openACL); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("second create: %v, want node exists", err)
	}
	if _, err := c.Create("/missing/child", nil, 0, openACL); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("create under missing parent: %v, want no node", err)
	}
	data, st, err := c.Get("/a")
	if err != nil || string(data) != "one" || st.Version != 0 || st.DataLength != 3 || st.Czxid != st.Mzxid {
		t.Fatalf("get: %q %+v %v", data, st, err)
	}
	st2, err := c.Set("/a", []byte("two"), 0)
	if err != nil || st2.Version != 1 || st2.Mzxid <= st.Mzxid || st2.Czxid != st.Czxid {
		t.Fatalf("set: %+v %v", st2, err)
	}
	if _, err := c.Set("/a", []byte("x"), 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("set with old version: %v", err)
	}
	must[string](t)(c.Create("/a/b", nil, 0, openACL))
	if err := c.Delete("/a", -1); !errors.Is(err, zk.ErrNotEmpty) {
		t.Fatalf("delete non-empty: %v", err)
	}
	_, parent, _ := c.Get("/a")
	if parent.NumChildren != 1 || parent.Cversion != 1 {
		t.Fatalf("parent stat after child create: %+v", parent)
	}
	_, child, _ := c.Exists("/a/b")
	if parent.Pzxid != child.Czxid {
		t.Fatalf("pzxid %d, child czxid %d", parent.Pzxid, child.Czxid)
	}
	if err := c.Delete("/a/b", 5); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("delete with wrong version: %v", err)
	}
	if err := c.Delete("/a/b", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/a", -1); err != nil {
		t.Fatal(err)
	}
	ok, _, err := c.Exists("/a")
	if ok || err != nil {
		t.Fatalf("exists after delete: %v %v", ok, err)
	}
	if _, _, err := c.Get("/a"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestChildrenAndRootNodes(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(5 * time.Second)
	children, _, err := c.Children("/")
	if err != nil || len(children) != 1 || children[0] != "zookeeper" {
		t.Fatalf("children of /: %v %v", children, err)
	}
	zkChildren, _, err := c.Children("/zookeeper")
	sort.Strings(zkChildren)
	if err != nil || fmt.Sprint(zkChildren) != "[config quota]" {
		t.Fatalf("children of /zookeeper: %v %v", zkChildren, err)
	}
	must[string](t)(c.Create("/p", nil, 0, openACL))
	for i := 0; i < 5; i++ {
		must[string](t)(c.Create(fmt.Sprintf("/p/c%d", i), nil, 0, openACL))
	}
	children, st, err := c.Children("/p")
	sort.Strings(children)
	if err != nil || fmt.Sprint(children) != "[c0 c1 c2 c3 c4]" || st.NumChildren != 5 {
		t.Fatalf("children: %v %+v %v", children, st, err)
	}
}

func TestSequentialNamesCountDeletes(t *testing.T) {
	ts := startServer(t)
	c, _ := ts.connect(5 * time.Second)
	must[string](t)(c.Create("/q", nil, 0, openACL))
	first := must[string](t)(c.Create("/q/n-", nil, zk.FlagSequence, openACL))
	if first != "/q/n-0000000000" {
		t.Fatalf("first sequential: %q", first)
	}
	must[string](t)(c.Create("/q/plain", nil, 0, openACL))
	if err := c.Delete("/q/plain", -1); err != nil {
		t.Fatal(err)
	}
	next := must[string](t)(c.Create("/q/n-", nil, zk.FlagSequence, openACL))
	if next != "/q/n-0000000002" {
		t.Fatalf("sequential after a create and a delete: %q, want suffix 2: ZooKeeper numbers by the children ever created", next)
	}
}

func TestEphemeralsGoWithTheirSession(t *testing.T) {
	ts := startServer(t)
	owner, _ := ts.connect(5 * time.Second)
	other, _ := ts.connect(5 * time.Second)
	must[string](t)(owner.Create("/e", []byte("x"), zk.FlagEphemeral, openACL))
	_, st, err := other.Exists("/e")
	if err != nil || st.EphemeralOwner != owner.SessionID() {
		t.Fatalf("ephemeral owner %x, session %x, err %v", st.EphemeralOwner, owner.SessionID(), err)
	}
	if _, err := owner.Create("/e/child", nil, 0, openACL); !errors.Is(err, zk.ErrNoChildrenForEphemerals) {
		t.Fatalf("child of ephemeral: %v", err)
	}
	_, _, watch, err := other.ExistsW("/e")
	if err != nil {
		t.Fatal(err)
	}
	owner.Close()
	if ev := waitEvent(t, watch); ev.Type != zk.EventNodeDeleted || ev.Path != "/e" {
		t.Fatalf("event %+v", ev)
	}
	if ok, _, _ := other.Exists("/e"); ok {
		t.Fatal("ephemeral survived its session's close")
	}
}

func TestDataLimit(t *testing.T) {
	ts := startServer(t, func(c *quorum.Config) { c.JuteMaxBuffer = 4096 })
	c, _ := ts.connect(5 * time.Second)
	must[string](t)(c.Create("/small", bytes.Repeat([]byte("x"), 1000), 0, openACL))
	if _, err := c.Set("/small", bytes.Repeat([]byte("x"), 3000), -1); err != nil {
		t.Fatalf("3000 bytes under a 4096 limit: %v", err)
	}
}
