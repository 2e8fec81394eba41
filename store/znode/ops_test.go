package znode

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// errCase: setup ops (must succeed) then op, which must fail with want.
type errCase struct {
	name  string
	opts  Options
	setup []Op
	op    Op
	auth  []zkproto.ID
	noSes bool // apply op from a session that does not exist
	want  zkproto.Err
}

func runErrCases(t *testing.T, cases []errCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.opts)
			for _, op := range c.setup {
				h.must(op, aliceID)
			}
			txn := h.txn(c.op)
			txn.Auth = c.auth
			if c.noSes {
				txn.Session = 77
			}
			res, ev := h.tree.Apply(txn)
			if res[0].Err != c.want {
				t.Fatalf("got %v, want %v", res[0].Err, c.want)
			}
			if c.want != zkproto.ErrOK && len(ev) != 0 {
				t.Fatalf("failed op produced events %v", ev)
			}
			if h.tree.LastZxid() != txn.Zxid {
				t.Fatalf("lastZxid %d, want %d", h.tree.LastZxid(), txn.Zxid)
			}
		})
	}
}

var (
	ext     = Options{ExtendedTypes: true}
	locked  = createACL("/locked", []zkproto.ACL{{Perms: zkproto.PermRead, ID: zkproto.AnyoneIDUnsafe}})
	private = createACL("/private", aliceACL)
)

func TestCreateErrors(t *testing.T) {
	ttl := func(path string, mode zkproto.CreateMode, ttl int64) Op {
		return Op{Type: zkproto.OpCreateTTL, Path: path, ACL: openACL, Mode: mode, TTL: ttl}
	}
	big := create("/big", 0)
	big.Data = make([]byte, DefaultMaxDataBytes+1)
	runErrCases(t, []errCase{
		{name: "ok", op: create("/a", 0), want: zkproto.ErrOK},
		{name: "bad mode", op: create("/a", 7), want: zkproto.ErrBadArguments},
		{name: "ttl disabled", op: ttl("/a", zkproto.ModePersistentWithTTL, 10), want: zkproto.ErrUnimplemented},
		{name: "ttl mode on create", opts: ext, op: create("/a", zkproto.ModePersistentWithTTL), want: zkproto.ErrBadArguments},
		{name: "ttl mode on create disabled", op: create("/a", zkproto.ModePersistentWithTTL), want: zkproto.ErrUnimplemented},
		{name: "ttl zero", opts: ext, op: ttl("/a", zkproto.ModePersistentWithTTL, 0), want: zkproto.ErrBadArguments},
		{name: "ttl too big", opts: ext, op: ttl("/a", zkproto.ModePersistentWithTTL, ttlValueMask+1), want: zkproto.ErrBadArguments},
		{name: "ttl max", opts: ext, op: ttl("/a", zkproto.ModePersistentWithTTL, ttlValueMask), want: zkproto.ErrOK},
		{name: "createTTL persistent mode", opts: ext, op: ttl("/a", 0, -1), want: zkproto.ErrBadArguments},
		{name: "container without ext", op: Op{Type: zkproto.OpCreateContainer, Path: "/c", ACL: openACL, Mode: zkproto.ModeContainer}, want: zkproto.ErrOK},
		{name: "ttl before session", op: ttl("/a", zkproto.ModePersistentWithTTL, 10), noSes: true, want: zkproto.ErrUnimplemented},
		{name: "expired session", op: create("/a", 0), noSes: true, want: zkproto.ErrSessionExpired},
		{name: "data too big", op: big, want: zkproto.ErrBadArguments},
		{name: "relative no slash", op: create("abc", 0), want: zkproto.ErrBadArguments},
		{name: "nul", op: create("/a\x00b", 0), want: zkproto.ErrBadArguments},
		{name: "relative with slash is NoNode", op: create("a/b", 0), want: zkproto.ErrNoNode},
		{name: "empty acl before NoNode", op: createACL("/missing/x", nil), want: zkproto.ErrInvalidACL},
		{name: "auth acl without ids", op: createACL("/a", zkproto.CreatorAllACL), auth: []zkproto.ID{{Scheme: "ip", ID: "127.0.0.1"}}, want: zkproto.ErrInvalidACL},
		{name: "auth acl with digest", op: createACL("/a", zkproto.CreatorAllACL), auth: []zkproto.ID{aliceID}, want: zkproto.ErrOK},
		{name: "world other", op: createACL("/a", []zkproto.ACL{{Perms: 31, ID: zkproto.ID{Scheme: "world", ID: "x"}}}), want: zkproto.ErrInvalidACL},
		{name: "digest no colon", op: createACL("/a", []zkproto.ACL{{Perms: 31, ID: zkproto.ID{Scheme: "digest", ID: "alice"}}}), want: zkproto.ErrInvalidACL},
		{name: "digest trailing colon", op: createACL("/a", []zkproto.ACL{{Perms: 31, ID: zkproto.ID{Scheme: "digest", ID: "alice:"}}}), want: zkproto.ErrInvalidACL},
		{name: "ip bits", op: createACL("/a", []zkproto.ACL{{Perms: 31, ID: zkproto.ID{Scheme: "ip", ID: "10.0.0.0/33"}}}), want: zkproto.ErrInvalidACL},
		{name: "ip v6", op: createACL("/a", []zkproto.ACL{{Perms: 31, ID: zkproto.ID{Scheme: "ip", ID: "::1"}}}), want: zkproto.ErrInvalidACL},
		{name: "ip cidr", op: createACL("/a", []zkproto.ACL{{Perms: 31, ID: zkproto.ID{Scheme: "ip", ID: "10.0.0.0/8"}}}), want: zkproto.ErrOK},
		{name: "sasl unknown", op: createACL("/a", []zkproto.ACL{{Perms: 31, ID: zkproto.ID{Scheme: "sasl", ID: "bob"}}}), want: zkproto.ErrInvalidACL},
		{name: "missing parent", op: create("/missing/x", 0), want: zkproto.ErrNoNode},
		{name: "NoNode before validation", setup: []Op{create("/a", 0)}, op: create("/a//b", 0), want: zkproto.ErrNoNode},
		{name: "trailing slash", setup: []Op{create("/a", 0)}, op: create("/a/", 0), want: zkproto.ErrBadArguments},
		{name: "trailing slash sequential", setup: []Op{create("/a", 0)}, op: create("/a/", zkproto.ModePersistentSequential), want: zkproto.ErrOK},
		{name: "root", op: create("/", 0), want: zkproto.ErrNodeExists},
		{name: "double slash", op: create("//", 0), want: zkproto.ErrBadArguments},
		{name: "dot", op: create("/.", 0), want: zkproto.ErrBadArguments},
		{name: "dotdot", setup: []Op{create("/a", 0)}, op: create("/a/..", 0), want: zkproto.ErrBadArguments},
		{name: "dots ok", op: create("/...", 0), want: zkproto.ErrOK},
		{name: "control char", op: create("/a\x01", 0), want: zkproto.ErrBadArguments},
		{name: "emoji", op: create("/\U0001F600", 0), want: zkproto.ErrBadArguments},
		{name: "bad utf8", op: create("/\xff", 0), want: zkproto.ErrBadArguments},
		{name: "unicode ok", op: create("/héllo", 0), want: zkproto.ErrOK},
		{name: "under config", op: create("/zookeeper/config/x", 0), want: zkproto.ErrNoAuth},
		{name: "under zookeeper", op: create("/zookeeper/foo", 0), want: zkproto.ErrOK},
		{name: "exists", setup: []Op{create("/a", 0)}, op: create("/a", 0), want: zkproto.ErrNodeExists},
		{name: "ephemeral parent", setup: []Op{create("/e", zkproto.ModeEphemeral)}, op: create("/e/x", 0), want: zkproto.ErrNoChildrenForEphemerals},
		{name: "ephemeral parent seq", setup: []Op{create("/e", zkproto.ModeEphemeral)}, op: create("/e/x", zkproto.ModePersistentSequential), want: zkproto.ErrNoChildrenForEphemerals},
		{name: "NoAuth", setup: []Op{locked}, op: create("/locked/x", 0), want: zkproto.ErrNoAuth},
		{name: "NoAuth before BadArguments", setup: []Op{locked}, op: create("/locked/.", 0), want: zkproto.ErrNoAuth},
		{name: "digest grants", setup: []Op{private}, op: create("/private/x", 0), auth: []zkproto.ID{aliceID}, want: zkproto.ErrOK},
		{name: "digest denies", setup: []Op{private}, op: create("/private/x", 0), auth: []zkproto.ID{{Scheme: "digest", ID: "bob:h"}}, want: zkproto.ErrNoAuth},
		{name: "super", setup: []Op{private}, op: create("/private/x", 0), auth: []zkproto.ID{{Scheme: "super"}}, want: zkproto.ErrOK},
		{name: "children of container", setup: []Op{{Type: zkproto.OpCreateContainer, Path: "/c", ACL: openACL, Mode: zkproto.ModeContainer}}, op: create("/c/x", 0), want: zkproto.ErrOK},
		{name: "children of ttl", opts: ext, setup: []Op{ttl("/t", zkproto.ModePersistentWithTTL, 5)}, op: create("/t/x", 0), want: zkproto.ErrOK},
	})
}

func TestDeleteErrors(t *testing.T) {
	runErrCases(t, []errCase{
		{name: "ok", setup: []Op{create("/a", 0)}, op: del("/a", -1), want: zkproto.ErrOK},
		{name: "root", op: del("/", -1), want: zkproto.ErrBadArguments},
		{name: "zookeeper", op: del("/zookeeper", -1), want: zkproto.ErrBadArguments},
		{name: "config", op: del("/zookeeper/config", -1), want: zkproto.ErrBadArguments},
		{name: "quota", op: del("/zookeeper/quota", -1), want: zkproto.ErrBadArguments},
		{name: "relative", op: del("abc", -1), want: zkproto.ErrBadArguments},
		{name: "expired first", op: del("/", -1), noSes: true, want: zkproto.ErrSessionExpired},
		{name: "missing", op: del("/missing", -1), want: zkproto.ErrNoNode},
		{name: "missing parent", op: del("/missing/x", -1), want: zkproto.ErrNoNode},
		{name: "trailing slash", setup: []Op{create("/a", 0)}, op: del("/a/", -1), want: zkproto.ErrNoNode},
		{name: "bad version", setup: []Op{create("/a", 0)}, op: del("/a", 3), want: zkproto.ErrBadVersion},
		{name: "not empty", setup: []Op{create("/a", 0), create("/a/b", 0)}, op: del("/a", -1), want: zkproto.ErrNotEmpty},
		{name: "BadVersion before NotEmpty", setup: []Op{create("/a", 0), create("/a/b", 0)}, op: del("/a", 5), want: zkproto.ErrBadVersion},
		{name: "NoAuth before NoNode", setup: []Op{locked}, op: del("/locked/x", -1), want: zkproto.ErrNoAuth},
		{name: "zookeeper child", setup: []Op{create("/zookeeper/foo", 0)}, op: del("/zookeeper/foo", -1), want: zkproto.ErrOK},
	})
}

func TestDeleteContainerErrors(t *testing.T) {
	dc := func(p string) Op { return Op{Type: zkproto.OpDeleteContainer, Path: p} }
	runErrCases(t, []errCase{
		{name: "special", op: dc("/zookeeper"), want: zkproto.ErrBadArguments},
		{name: "missing", op: dc("/x"), want: zkproto.ErrNoNode},
		{name: "ephemeral", setup: []Op{create("/e", zkproto.ModeEphemeral)}, op: dc("/e"), want: zkproto.ErrBadVersion},
		{name: "persistent (as ZooKeeper)", setup: []Op{create("/p", 0)}, op: dc("/p"), want: zkproto.ErrOK},
		{name: "not empty", setup: []Op{create("/p", 0), create("/p/c", 0)}, op: dc("/p"), want: zkproto.ErrNotEmpty},
		{name: "no session needed", setup: []Op{create("/p", 0)}, op: dc("/p"), noSes: true, want: zkproto.ErrOK},
	})
}

func TestSetDataSetACLCheckErrors(t *testing.T) {
	setACL := func(p string, acl []zkproto.ACL, v int32) Op {
		return Op{Type: zkproto.OpSetACL, Path: p, ACL: acl, Version: v}
	}
	check := func(p string, v int32) Op { return Op{Type: zkproto.OpCheck, Path: p, Version: v} }
	big := setData("/a", "", -1)
	big.Data = make([]byte, DefaultMaxDataBytes+1)
	runErrCases(t, []errCase{
		{name: "set ok", setup: []Op{create("/a", 0)}, op: setData("/a", "x", 0), want: zkproto.ErrOK},
		{name: "set root", op: setData("/", "x", -1), want: zkproto.ErrOK},
		{name: "set invalid", op: setData("/a/", "x", -1), want: zkproto.ErrBadArguments},
		{name: "set missing", op: setData("/a", "x", -1), want: zkproto.ErrNoNode},
		{name: "set too big", setup: []Op{create("/a", 0)}, op: big, want: zkproto.ErrBadArguments},
		{name: "set config", op: setData("/zookeeper/config", "x", -1), want: zkproto.ErrNoAuth},
		{name: "set NoAuth before BadVersion", setup: []Op{locked}, op: setData("/locked", "x", 9), want: zkproto.ErrNoAuth},
		{name: "set bad version", setup: []Op{create("/a", 0)}, op: setData("/a", "x", 1), want: zkproto.ErrBadVersion},
		{name: "set expired", setup: []Op{create("/a", 0)}, op: setData("/a", "x", -1), noSes: true, want: zkproto.ErrSessionExpired},
		{name: "acl ok", setup: []Op{create("/a", 0)}, op: setACL("/a", aliceACL, 0), want: zkproto.ErrOK},
		{name: "acl invalid before NoNode", op: setACL("/missing", nil, -1), want: zkproto.ErrInvalidACL},
		{name: "acl BadArguments first", op: setACL("bad", nil, -1), want: zkproto.ErrBadArguments},
		{name: "acl missing", op: setACL("/missing", openACL, -1), want: zkproto.ErrNoNode},
		{name: "acl NoAuth", setup: []Op{locked}, op: setACL("/locked", openACL, -1), want: zkproto.ErrNoAuth},
		{name: "acl bad aversion", setup: []Op{create("/a", 0)}, op: setACL("/a", openACL, 1), want: zkproto.ErrBadVersion},
		{name: "acl config aversion -1", op: setACL("/zookeeper/config", openACL, -1), auth: []zkproto.ID{{Scheme: "super"}}, want: zkproto.ErrOK},
		{name: "check ok", setup: []Op{create("/a", 0)}, op: check("/a", 0), want: zkproto.ErrOK},
		{name: "check bad version", setup: []Op{create("/a", 0)}, op: check("/a", 1), want: zkproto.ErrBadVersion},
		{name: "check missing", op: check("/a", 1), want: zkproto.ErrNoNode},
		{name: "check invalid", op: check("/a/", 1), want: zkproto.ErrBadArguments},
		{name: "check NoAuth", setup: []Op{private}, op: check("/private", -1), want: zkproto.ErrNoAuth},
		{name: "unknown op", op: Op{Type: zkproto.OpGetData, Path: "/"}, want: zkproto.ErrUnimplemented},
	})
}

func TestSystemNodes(t *testing.T) {
	tr := New(Options{})
	want := map[string]zkproto.Stat{
		"/":                 {Cversion: -1, NumChildren: 1},
		"/zookeeper":        {Cversion: -2, NumChildren: 2},
		"/zookeeper/quota":  {},
		"/zookeeper/config": {Aversion: -1},
	}
	for p, w := range want {
		d, s, err := tr.Get(p)
		if err != zkproto.ErrOK || s != w || d == nil || len(d) != 0 {
			t.Errorf("%s: %v %+v %v", p, err, s, d)
		}
	}
	if acl, _, _ := tr.ACL("/zookeeper/config"); len(acl) != 1 || acl[0] != zkproto.ReadACLUnsafe[0] {
		t.Errorf("config acl %v", acl)
	}
	if _, s, _ := tr.Get(""); s.NumChildren != 1 {
		t.Errorf("'' is not the root alias")
	}
	if n := tr.NodeCount(); n != 4 {
		t.Errorf("NodeCount %d", n)
	}
	if kids, _, _ := tr.Children("/zookeeper"); strings.Join(kids, ",") != "config,quota" {
		t.Errorf("children %v", kids)
	}
}

func TestStatsAndEvents(t *testing.T) {
	h := newHarness(t, Options{})
	r := h.must(Op{Type: zkproto.OpCreate2, Path: "/p", Data: []byte("abc"), ACL: openACL})
	zc := h.zxid
	if r.Stat != (zkproto.Stat{Czxid: zc, Mzxid: zc, Pzxid: zc, Ctime: 1000 * zc, Mtime: 1000 * zc, DataLength: 3}) {
		t.Fatalf("create stat %+v", r.Stat)
	}
	txn := h.txn(create("/p/a", zkproto.ModeEphemeral))
	_, ev := h.tree.Apply(txn)
	wantEv := []Event{{Type: zkproto.EventNodeCreated, Path: "/p/a"}, {Type: zkproto.EventNodeChildrenChanged, Path: "/p"}}
	if !equalEvents(ev, wantEv) {
		t.Fatalf("events %v", ev)
	}
	if s := h.stat("/p/a"); s.EphemeralOwner != sess {
		t.Fatalf("owner %x", s.EphemeralOwner)
	}
	if s := h.stat("/p"); s.Cversion != 1 || s.NumChildren != 1 || s.Pzxid != txn.Zxid || s.Mzxid != zc {
		t.Fatalf("parent after create %+v", s)
	}
	txn = h.txn(setData("/p", "xy", 0))
	res, ev := h.tree.Apply(txn)
	if s := res[0].Stat; s.Version != 1 || s.Mzxid != txn.Zxid || s.Mtime != txn.Time || s.DataLength != 2 || s.Czxid != zc {
		t.Fatalf("setData stat %+v", s)
	}
	if !equalEvents(ev, []Event{{Type: zkproto.EventNodeDataChanged, Path: "/p"}}) {
		t.Fatalf("events %v", ev)
	}
	txn = h.txn(del("/p/a", 0))
	_, ev = h.tree.Apply(txn)
	if !equalEvents(ev, []Event{{Type: zkproto.EventNodeDeleted, Path: "/p/a"}, {Type: zkproto.EventNodeChildrenChanged, Path: "/p"}}) {
		t.Fatalf("events %v", ev)
	}
	if s := h.stat("/p"); s.Cversion != 2 || s.NumChildren != 0 || s.Pzxid != txn.Zxid {
		t.Fatalf("parent after delete %+v", s)
	}
	res, ev = h.tree.Apply(h.txn(Op{Type: zkproto.OpSetACL, Path: "/p", ACL: aliceACL, Version: 0}))
	if res[0].Stat.Aversion != 1 || len(ev) != 0 {
		t.Fatalf("setACL %+v %v", res[0], ev)
	}
	if _, ev = h.tree.Apply(h.txn(create("/top", 0))); ev[1].Path != "/" {
		t.Fatalf("root child event %v", ev)
	}
}

func equalEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].Path != b[i].Path {
			return false
		}
	}
	return true
}

func TestSequentialAcrossDeletes(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/q", 0))
	names := []string{}
	for i := 0; i < 3; i++ {
		r := h.must(create("/q/n-", zkproto.ModePersistentSequential))
		names = append(names, r.Path)
		h.must(del(r.Path, -1))
	}
	h.must(create("/q/plain", 0))
	r := h.must(create("/q/n-", zkproto.ModeEphemeralSequential))
	names = append(names, r.Path)
	want := "/q/n-0000000000 /q/n-0000000001 /q/n-0000000002 /q/n-0000000004"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("got %s", got)
	}
	// 5 creates, 3 deletes: the client sees cversion 8 (ZooKeeper: 2*5-2).
	if s := h.stat("/q"); s.Cversion != 8 || s.NumChildren != 2 {
		t.Fatalf("stat %+v", s)
	}
	if seqSuffix(-5) != "-000000005" || seqSuffix(123) != "0000000123" {
		t.Fatal(seqSuffix(-5))
	}
}

func TestNullData(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(Op{Type: zkproto.OpCreate, Path: "/n", ACL: openACL})
	if d, _, _ := h.tree.Get("/n"); d != nil {
		t.Fatalf("null data read as %v", d)
	}
	h.must(Op{Type: zkproto.OpSetData, Path: "/n", Data: []byte{}, Version: -1})
	if d, _, _ := h.tree.Get("/n"); d == nil || len(d) != 0 {
		t.Fatalf("empty data read as %v", d)
	}
	h.must(setData("/n", "v", -1))
	if d, _, _ := h.tree.Get("/n"); !bytes.Equal(d, []byte("v")) {
		t.Fatalf("%q", d)
	}
}
