package znode

import (
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

func TestMultiAtomic(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/a", 0))
	before := h.tree.Clone()
	txn := h.txn(
		create("/a/x", 0),
		setData("/a", "new", 0),
		create("/a/y", zkproto.ModePersistentSequential),
		del("/a/x", -1),
		Op{Type: zkproto.OpCheck, Path: "/a", Version: 7}, // fails
		create("/b", 0),
	)
	txn.Multi = true
	res, ev := h.tree.Apply(txn)
	if len(ev) != 0 {
		t.Fatalf("events of a failed multi: %v", ev)
	}
	want := []zkproto.Err{0, 0, 0, 0, zkproto.ErrBadVersion, zkproto.ErrRuntimeInconsistency}
	for i, r := range res {
		if r.Type != zkproto.OpError || r.Err != want[i] {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if h.tree.LastZxid() != txn.Zxid {
		t.Fatal("failed multi did not take its zxid")
	}
	assertSameTree(t, before, h.tree)
}

func TestMultiSuccess(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/a", 0))
	txn := h.txn(
		Op{Type: zkproto.OpCreate2, Path: "/a/x", ACL: openACL},
		create("/a/x/y", 0), // sees the earlier op
		create("/a/s-", zkproto.ModePersistentSequential),
		create("/a/s-", zkproto.ModePersistentSequential),
		Op{Type: zkproto.OpCheck, Path: "/a/x", Version: 0},
		setData("/a/x", "v", 0),
		setData("/a/x", "w", 1),
		Op{Type: zkproto.OpCreate, Path: "/c", ACL: openACL, Mode: zkproto.ModeContainer},
	)
	txn.Multi = true
	res, ev := h.tree.Apply(txn)
	wantTypes := []zkproto.OpCode{zkproto.OpCreate, zkproto.OpCreate, zkproto.OpCreate, zkproto.OpCreate,
		zkproto.OpCheck, zkproto.OpSetData, zkproto.OpSetData, zkproto.OpCreateContainer}
	for i, r := range res {
		if r.Err != 0 || r.Type != wantTypes[i] {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if res[2].Path != "/a/s-0000000001" || res[3].Path != "/a/s-0000000002" {
		t.Fatalf("seq %s %s", res[2].Path, res[3].Path)
	}
	if len(ev) != 2*5+2 {
		t.Fatalf("%d events", len(ev))
	}
	for _, p := range []string{"/a/x", "/a/x/y", "/c"} {
		if s := h.stat(p); s.Czxid != txn.Zxid {
			t.Fatalf("%s czxid %d", p, s.Czxid)
		}
	}
	if s := h.stat("/a/x"); s.Version != 2 || s.Mzxid != txn.Zxid {
		t.Fatalf("stat %+v", s)
	}
	if len(h.tree.ReapCandidates(1<<62)) != 0 {
		t.Fatal("fresh container is a candidate")
	}
}

func TestMultiMarshalling(t *testing.T) {
	for _, op := range []Op{
		{Type: zkproto.OpGetData, Path: "/"},
		{Type: zkproto.OpSetACL, Path: "/", ACL: openACL, Version: -1},
		{Type: zkproto.OpCreate, Path: "/t", ACL: openACL, Mode: zkproto.ModePersistentWithTTL},
		{Type: zkproto.OpCreateTTL, Path: "/t", ACL: openACL, Mode: 0, TTL: 5},
		{Type: zkproto.OpDeleteContainer, Path: "/x"},
	} {
		h := newHarness(t, Options{ExtendedTypes: true})
		txn := h.txn(create("/a", 0), op)
		txn.Multi = true
		res, ev := h.tree.Apply(txn)
		if len(res) != 1 || res[0] != (Result{Type: zkproto.OpMulti, Err: zkproto.ErrMarshallingError}) || ev != nil {
			t.Fatalf("%v: %+v", op.Type, res)
		}
		if _, err := h.tree.Stat("/a"); err != zkproto.ErrNoNode {
			t.Fatal("applied")
		}
	}
}

func TestMultiEmpty(t *testing.T) {
	h := newHarness(t, Options{})
	res, ev := h.tree.Apply(Txn{Zxid: 9, Multi: true})
	if len(res) != 0 || len(ev) != 0 || h.tree.LastZxid() != 9 {
		t.Fatal(res, ev)
	}
}

func TestSessions(t *testing.T) {
	h := newHarness(t, Options{})
	if !h.tree.SessionExists(sess) || h.tree.Sessions()[sess] != 30000 {
		t.Fatal("session not created")
	}
	h.must(create("/a", 0))
	h.must(create("/a/e2", zkproto.ModeEphemeral))
	h.must(create("/e1", zkproto.ModeEphemeral))
	h.must(create("/a/p", 0))
	other := h.txn(Op{Type: zkproto.OpCreateSession, SessionTimeout: 4000})
	other.Session = 99
	h.tree.Apply(other)
	o := h.txn(create("/o", zkproto.ModeEphemeral))
	o.Session = 99
	h.tree.Apply(o)
	if got := h.tree.Ephemerals(sess, ""); len(got) != 2 || got[0] != "/a/e2" || got[1] != "/e1" {
		t.Fatalf("ephemerals %v", got)
	}
	if got := h.tree.Ephemerals(sess, "/a"); len(got) != 1 {
		t.Fatalf("ephemerals /a %v", got)
	}
	txn := h.txn(Op{Type: zkproto.OpCloseSession})
	res, ev := h.tree.Apply(txn)
	if res[0].Err != 0 || len(ev) != 4 {
		t.Fatalf("%+v %v", res, ev)
	}
	// Java's HashSet order of the two paths in a 4-bucket table (what
	// ZooKeeper iterates): "/a/e2" lands in an earlier bucket than "/e1".
	want := []Event{{Type: zkproto.EventNodeDeleted, Path: "/a/e2"}, {Type: zkproto.EventNodeChildrenChanged, Path: "/a"},
		{Type: zkproto.EventNodeDeleted, Path: "/e1"}, {Type: zkproto.EventNodeChildrenChanged, Path: "/"}}
	if !equalEvents(ev, want) {
		t.Fatalf("events %v", ev)
	}
	if h.tree.SessionExists(sess) || len(h.tree.Ephemerals(sess, "")) != 0 {
		t.Fatal("session survived")
	}
	if s := h.stat("/a"); s.NumChildren != 1 || s.Pzxid != txn.Zxid {
		t.Fatalf("parent %+v", s)
	}
	if _, err := h.tree.Stat("/o"); err != 0 {
		t.Fatal("other session's ephemeral deleted")
	}
	if r := h.do(create("/late", zkproto.ModeEphemeral)); r.Err != zkproto.ErrSessionExpired {
		t.Fatalf("write after close: %v", r.Err)
	}
	bad := h.txn(Op{Type: zkproto.OpCreateSession})
	bad.Session = containerOwner
	if res, _ := h.tree.Apply(bad); res[0].Err != zkproto.ErrBadArguments {
		t.Fatal("container owner accepted as a session")
	}
}

func TestReapCandidates(t *testing.T) {
	h := newHarness(t, Options{ExtendedTypes: true})
	cont := func(p string) Op {
		return Op{Type: zkproto.OpCreateContainer, Path: p, ACL: openACL, Mode: zkproto.ModeContainer}
	}
	ttl := func(p string, ms int64) Op {
		return Op{Type: zkproto.OpCreateTTL, Path: p, ACL: openACL, Mode: zkproto.ModePersistentWithTTL, TTL: ms}
	}
	h.must(cont("/c1"))
	h.must(cont("/c2"))
	h.must(create("/c2/x", 0))
	h.must(cont("/c3"))
	h.must(create("/c3/x", 0))
	h.must(del("/c3/x", -1))
	r := h.must(ttl("/t1", 500))
	h.must(ttl("/t2", 500))
	h.must(create("/t2/x", 0))
	if s := h.stat("/t1"); s.EphemeralOwner != 0 || r.Stat.EphemeralOwner != 0 {
		t.Fatal("ttl owner visible")
	}
	if s := h.stat("/c1"); s.EphemeralOwner != 0 {
		t.Fatal("container owner visible")
	}
	tm := h.zxid * 1000 // mtime of /t1 is below this
	got := h.tree.ReapCandidates(tm + 1000)
	if len(got) != 2 || got[0] != "/c3" || got[1] != "/t1" {
		t.Fatalf("candidates %v", got)
	}
	if got := h.tree.ReapCandidates(0); len(got) != 1 {
		t.Fatalf("candidates at 0 %v", got)
	}
	res, _ := h.tree.Apply(Txn{Zxid: 100, Ops: []Op{{Type: zkproto.OpDeleteContainer, Path: "/c3"}}})
	if res[0].Err != 0 {
		t.Fatal(res[0].Err)
	}
	h2 := newHarness(t, Options{ContainerMaxNeverUsedMs: 10})
	h2.must(cont("/c"))
	if got := h2.tree.ReapCandidates(h2.zxid*1000 + 11); len(got) != 1 {
		t.Fatalf("never-used container %v", got)
	}
}

func TestAllChildrenNumber(t *testing.T) {
	h := newHarness(t, Options{})
	for _, p := range []string{"/a", "/a/b", "/a/b/c", "/a/b/d", "/a!", "/a!/x", "/ab", "/a/z"} {
		h.must(create(p, 0))
	}
	for p, want := range map[string]int32{"/a": 4, "/a/b": 2, "/a/b/c": 0, "/": 11, "": 12, "/zookeeper": 2} {
		if n, err := h.tree.AllChildrenNumber(p); n != want || err != 0 {
			t.Errorf("%s: %d %v, want %d", p, n, err, want)
		}
	}
	if _, err := h.tree.AllChildrenNumber("/nope"); err != zkproto.ErrNoNode {
		t.Error(err)
	}
	kids, _, _ := h.tree.Children("/a")
	if len(kids) != 2 || kids[0] != "b" || kids[1] != "z" {
		t.Errorf("children %v", kids)
	}
	kids, _, _ = h.tree.Children("/")
	if len(kids) != 4 {
		t.Errorf("root children %v", kids)
	}
}

func TestCheckACL(t *testing.T) {
	h := newHarness(t, Options{})
	ip := []zkproto.ACL{{Perms: zkproto.PermRead, ID: zkproto.ID{Scheme: "ip", ID: "10.1.0.0/16"}}}
	h.must(createACL("/ip", ip))
	cases := []struct {
		ids   []zkproto.ID
		perm  int32
		super bool
		want  zkproto.Err
	}{
		{[]zkproto.ID{{Scheme: "ip", ID: "10.1.2.3"}}, zkproto.PermRead, false, 0},
		{[]zkproto.ID{{Scheme: "ip", ID: "10.2.2.3"}}, zkproto.PermRead, false, zkproto.ErrNoAuth},
		{[]zkproto.ID{{Scheme: "ip", ID: "10.1.2.3"}}, zkproto.PermWrite, false, zkproto.ErrNoAuth},
		{nil, zkproto.PermWrite, true, 0},
	}
	for i, c := range cases {
		if err := h.tree.CheckACL("/ip", c.perm, c.ids, c.super); err != c.want {
			t.Errorf("case %d: %v", i, err)
		}
	}
	if err := h.tree.CheckACL("/none", 1, nil, true); err != zkproto.ErrNoNode {
		t.Error(err)
	}
	if !matchIP("1.2.3.4", "1.2.3.4") || matchIP("1.2.3.5", "1.2.3.4") || !matchIP("1.2.3.5", "1.2.3.4/31") || !matchIP("9.9.9.9", "1.2.3.4/0") {
		t.Error("matchIP")
	}
	red := RedactDigests([]zkproto.ACL{{Perms: 1, ID: aliceID}, openACL[0]})
	if red[0].ID.ID != "alice:x" || red[1] != openACL[0] {
		t.Error(red)
	}
}
