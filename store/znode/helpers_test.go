package znode

import (
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

const sess = int64(0x100000001)

var (
	openACL  = zkproto.OpenACLUnsafe
	aliceID  = zkproto.ID{Scheme: "digest", ID: "alice:hash"}
	aliceACL = []zkproto.ACL{{Perms: zkproto.PermAll, ID: aliceID}}
)

// harness applies txns with increasing zxids and times.
type harness struct {
	t    testing.TB
	tree *Tree
	zxid int64
}

func newHarness(t testing.TB, opts Options) *harness {
	h := &harness{t: t, tree: New(opts)}
	h.must(Op{Type: zkproto.OpCreateSession, SessionTimeout: 30000})
	return h
}

func (h *harness) txn(ops ...Op) Txn {
	h.zxid++
	return Txn{Zxid: h.zxid, Time: 1000 * h.zxid, Session: sess, Ops: ops}
}

// do applies one op as session sess with auth.
func (h *harness) do(op Op, auth ...zkproto.ID) Result {
	txn := h.txn(op)
	txn.Auth = auth
	res, _ := h.tree.Apply(txn)
	return res[0]
}

func (h *harness) must(op Op, auth ...zkproto.ID) Result {
	h.t.Helper()
	r := h.do(op, auth...)
	if r.Err != zkproto.ErrOK {
		h.t.Fatalf("%v %q: %v", op.Type, op.Path, r.Err)
	}
	return r
}

func create(path string, mode zkproto.CreateMode) Op {
	return Op{Type: zkproto.OpCreate, Path: path, Data: []byte("d"), ACL: openACL, Mode: mode}
}

func createACL(path string, acl []zkproto.ACL) Op {
	return Op{Type: zkproto.OpCreate, Path: path, ACL: acl}
}

func del(path string, version int32) Op {
	return Op{Type: zkproto.OpDelete, Path: path, Version: version}
}

func setData(path string, data string, version int32) Op {
	return Op{Type: zkproto.OpSetData, Path: path, Data: []byte(data), Version: version}
}

func (h *harness) stat(path string) zkproto.Stat {
	h.t.Helper()
	s, err := h.tree.Stat(path)
	if err != zkproto.ErrOK {
		h.t.Fatalf("stat %s: %v", path, err)
	}
	return s
}
