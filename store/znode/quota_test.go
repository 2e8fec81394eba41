package znode

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// setQuota writes the nodes zkCli's setquota writes for path (SetQuotaCommand.createQuota).
func (h *harness) setQuota(path, limits string) {
	h.t.Helper()
	p := QuotaRoot
	for _, name := range strings.Split(path[1:], "/") {
		p += "/" + name
		if _, err := h.tree.Stat(p); err == zkproto.ErrNoNode {
			h.must(Op{Type: zkproto.OpCreate, Path: p, ACL: openACL})
		}
	}
	h.must(Op{Type: zkproto.OpCreate, Path: QuotaRoot + path + "/" + QuotaLimitNode, Data: []byte(limits), ACL: openACL})
	h.must(Op{Type: zkproto.OpCreate, Path: QuotaRoot + path + "/" + QuotaStatNode, Data: []byte("count=0,bytes=0"), ACL: openACL})
}

func (h *harness) quotaStats(path string) string {
	h.t.Helper()
	data, _, err := h.tree.Get(QuotaRoot + path + "/" + QuotaStatNode)
	if err != zkproto.ErrOK {
		h.t.Fatalf("get stats of %s: %v", path, err)
	}
	return string(data)
}

func (h *harness) wantStats(path, want string) {
	h.t.Helper()
	if got := h.quotaStats(path); got != want {
		h.t.Fatalf("stats of %s = %q, want %q", path, got, want)
	}
}

// TestQuotaStats: the stats node starts with the subtree's counts, follows
// creates, setData, deletes and a closing session's ephemerals below the
// quota, and keeps its own stat (version, mzxid) throughout.
func TestQuotaStats(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/a", 0))                                                                   // 1 byte
	h.must(Op{Type: zkproto.OpCreate, Path: "/a/b", Data: []byte("xyz"), ACL: openACL})       // 3 bytes
	h.must(Op{Type: zkproto.OpCreate, Path: "/other", Data: []byte("ignored"), ACL: openACL}) // not under /a
	h.setQuota("/a", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=10")
	h.wantStats("/a", "count=2,bytes=4")
	before := h.stat(QuotaRoot + "/a/" + QuotaStatNode)

	h.must(Op{Type: zkproto.OpCreate, Path: "/a/b/c", Data: []byte("12345"), ACL: openACL})
	h.wantStats("/a", "count=3,bytes=9")
	h.must(setData("/a/b", "x", -1))
	h.wantStats("/a", "count=3,bytes=7")
	h.must(Op{Type: zkproto.OpCreate, Path: "/a/e", Data: []byte("ee"), ACL: openACL, Mode: zkproto.ModeEphemeral})
	h.wantStats("/a", "count=4,bytes=9")
	h.must(del("/a/b/c", -1))
	h.wantStats("/a", "count=3,bytes=4")
	h.must(setData("/other", "not counted", -1))
	h.wantStats("/a", "count=3,bytes=4")
	h.must(Op{Type: zkproto.OpCloseSession})
	h.wantStats("/a", "count=2,bytes=2")

	after := h.stat(QuotaRoot + "/a/" + QuotaStatNode)
	if after.Version != before.Version || after.Mzxid != before.Mzxid {
		t.Fatalf("stats node stat changed: %+v -> %+v", before, after)
	}
}

// TestQuotaNested: a node counts for the deepest quota above it, and
// nothing counts for a quota once its limits node is gone (delquota).
func TestQuotaNested(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/a", 0))
	h.must(create("/a/b", 0))
	h.setQuota("/a/b", "count=5,bytes=-1")
	h.must(Op{Type: zkproto.OpCreate, Path: QuotaRoot + "/a/" + QuotaLimitNode, Data: []byte("count=5,bytes=-1"), ACL: openACL})
	h.must(Op{Type: zkproto.OpCreate, Path: QuotaRoot + "/a/" + QuotaStatNode, ACL: openACL})
	h.wantStats("/a", "count=2,bytes=2")
	h.must(create("/a/b/c", 0))
	h.wantStats("/a/b", "count=2,bytes=2")
	h.wantStats("/a", "count=2,bytes=2")
	h.must(create("/a/c", 0))
	h.wantStats("/a", "count=3,bytes=3")

	h.must(del(QuotaRoot+"/a/b/"+QuotaLimitNode, -1))
	h.must(create("/a/b/d", 0))
	h.wantStats("/a/b", "count=2,bytes=2") // no longer tracked
	h.wantStats("/a", "count=4,bytes=4")
}

// TestQuotaRootNotTracked: a quota on "/" gets its counts when set and is
// not kept up to date afterwards (getMaxPrefixWithQuota skips the root).
func TestQuotaRootNotTracked(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(Op{Type: zkproto.OpCreate, Path: QuotaRoot + "/" + QuotaLimitNode, Data: []byte("count=1,bytes=-1"), ACL: openACL})
	h.must(Op{Type: zkproto.OpCreate, Path: QuotaRoot + "/" + QuotaStatNode, ACL: openACL})
	// "/", "/zookeeper", quota, config, limits, stats; 16 bytes of limits data.
	h.wantStats("", "count=6,bytes=16")
	h.must(create("/x", 0))
	h.wantStats("", "count=6,bytes=16")
}

// TestQuotaEnforce: over a hard limit, a create or setData fails with
// QuotaExceeded when the txn enforces quotas, and warns otherwise; a soft
// limit only warns. Only the hard limit is checked when both are set.
func TestQuotaEnforce(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/a", 0))
	h.setQuota("/a", "count=1,bytes=-1=;byteHardLimit=4;countHardLimit=2")
	apply := func(enforce bool, op Op) Result {
		txn := h.txn(op)
		txn.EnforceQuota = enforce
		res, _ := h.tree.Apply(txn)
		return res[0]
	}
	// count 2 <= hard 2: fine, and the soft limit 1 is not checked.
	if r := apply(true, create("/a/1", 0)); r.Err != zkproto.ErrOK || r.Warning != "" {
		t.Fatalf("create within hard limit: %v %q", r.Err, r.Warning)
	}
	r := apply(true, create("/a/2", 0))
	if r.Err != zkproto.ErrQuotaExceeded || r.Warning != "Quota exceeded: /a [current count=3, hardCountLimit=2]" {
		t.Fatalf("create over hard count: %v %q", r.Err, r.Warning)
	}
	h.wantStats("/a", "count=2,bytes=2")
	if r := apply(false, create("/a/2", 0)); r.Err != zkproto.ErrOK || r.Warning == "" {
		t.Fatalf("unenforced create over hard count: %v %q", r.Err, r.Warning)
	}
	h.wantStats("/a", "count=3,bytes=3")
	r = apply(true, setData("/a", "xyz", 7)) // the quota check comes before the version check
	if r.Err != zkproto.ErrQuotaExceeded || r.Warning != "Quota exceeded: /a [current bytes=5, hardByteLimit=4]" {
		t.Fatalf("setData over hard bytes: %v %q", r.Err, r.Warning)
	}
	if r := apply(true, setData("/a", "", -1)); r.Err != zkproto.ErrOK {
		t.Fatalf("setData shrinking: %v", r.Err)
	}
	h.wantStats("/a", "count=3,bytes=2")

	h.must(setData(QuotaRoot+"/a/"+QuotaLimitNode, "count=1,bytes=-1", -1)) // soft only
	if r := apply(true, create("/a/3", 0)); r.Err != zkproto.ErrOK || r.Warning != "Quota exceeded: /a [current count=4, softCountLimit=1]" {
		t.Fatalf("create over soft count: %v %q", r.Err, r.Warning)
	}
}

// TestQuotaMultiRollback: a failed multi leaves the stats as they were.
func TestQuotaMultiRollback(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/a", 0))
	h.setQuota("/a", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=3")
	txn := h.txn(create("/a/1", 0), create("/a/2", 0), create("/a/3", 0))
	txn.Multi, txn.EnforceQuota = true, true
	res, _ := h.tree.Apply(txn)
	if res[2].Err != zkproto.ErrQuotaExceeded {
		t.Fatalf("results %+v", res)
	}
	h.wantStats("/a", "count=1,bytes=1")
}

// TestQuotaSnapshot: quotas are derived from the tree, so a tree read from
// a snapshot keeps counting.
func TestQuotaSnapshot(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/a", 0))
	h.setQuota("/a", "count=5,bytes=-1")
	var buf bytes.Buffer
	if err := h.tree.Clone().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadSnapshot(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.tree = loaded
	h.must(create("/a/b", 0))
	h.wantStats("/a", "count=2,bytes=2")
}

func TestStatsTrack(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"count=0,bytes=0", "count=0,bytes=0"},
		{"count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2"},
		{"countHardLimit=2;count=3", "count=3,bytes=-1=;countHardLimit=2"},
		{"", "count=-1,bytes=-1"},
		{"count=,bytes=7", "count=-1,bytes=7"},
	} {
		if got := ParseStatsTrack([]byte(c.in)).String(); got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTxnEnforceQuotaRoundTrip(t *testing.T) {
	txn := Txn{Zxid: 1, Session: sess, EnforceQuota: true, Ops: []Op{create("/a", 0)}}
	got, err := DecodeTxn(txn.Append(nil))
	if err != nil || !got.EnforceQuota {
		t.Fatalf("decoded %+v, %v", got, err)
	}
}
