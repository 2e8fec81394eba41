package znode

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// TestSessionOwner: a session belongs to the server that created it, then
// to the one that last revalidated it; a write through any other server
// fails with SessionMoved and changes nothing (in a multi too), while
// closeSession and writes without an owner are never refused.
func TestSessionOwner(t *testing.T) {
	tr := New(Options{})
	zxid := int64(0)
	apply := func(owner int64, multi bool, ops ...Op) []Result {
		zxid++
		res, _ := tr.Apply(Txn{Zxid: zxid, Time: zxid, Session: sess, Owner: owner, Multi: multi, Ops: ops})
		return res
	}
	if r := apply(1, false, Op{Type: zkproto.OpCreateSession, SessionTimeout: 4000}); r[0].Err != zkproto.ErrOK {
		t.Fatal(r[0].Err)
	}
	if o, ok := tr.SessionOwner(sess); !ok || o != 1 {
		t.Fatalf("owner %d %v, want 1", o, ok)
	}
	if r := apply(1, false, create("/a", 0)); r[0].Err != zkproto.ErrOK {
		t.Fatal(r[0].Err)
	}
	if r := apply(2, false, create("/b", 0)); r[0].Err != zkproto.ErrSessionMoved {
		t.Fatalf("write through a non-owner: %v, want SessionMoved", r[0].Err)
	}
	if r := apply(2, false, Op{Type: OpRevalidateSession, SessionTimeout: 6000}); r[0].Err != zkproto.ErrOK {
		t.Fatal(r[0].Err)
	}
	if r := apply(1, false, Op{Type: zkproto.OpSetData, Path: "/a", Version: -1}); r[0].Err != zkproto.ErrSessionMoved {
		t.Fatalf("write through the old owner: %v, want SessionMoved", r[0].Err)
	}
	r := apply(1, true, create("/m", 0), Op{Type: zkproto.OpCheck, Path: "/a", Version: -1})
	if r[0].Err != zkproto.ErrSessionMoved || r[1].Err != zkproto.ErrRuntimeInconsistency {
		t.Fatalf("multi through the old owner: %+v", r)
	}
	if r := apply(2, false, create("/b", 0)); r[0].Err != zkproto.ErrOK {
		t.Fatal(r[0].Err)
	}
	if r := apply(0, false, create("/c", 0)); r[0].Err != zkproto.ErrOK {
		t.Fatalf("a write without an owner: %v", r[0].Err)
	}
	if _, err := tr.Stat("/m"); err != zkproto.ErrNoNode {
		t.Fatal("a refused multi changed the tree")
	}
	if _, err := tr.Stat("/b"); err != zkproto.ErrOK {
		t.Fatal("a write through the owner is missing")
	}
	if tr.LastZxid() != zxid {
		t.Fatalf("a refused write must still take its zxid: last %d, want %d", tr.LastZxid(), zxid)
	}
	// The owner is in the snapshot.
	var buf bytes.Buffer
	if err := tr.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSnapshot(&buf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := back.SessionOwner(sess); o != 2 {
		t.Fatalf("owner after a snapshot: %d, want 2", o)
	}
	apply(1, false, Op{Type: zkproto.OpCloseSession})
	if _, ok := tr.SessionOwner(sess); ok {
		t.Fatal("closeSession through the old owner must close the session")
	}
	zxid++
	if r, _ := tr.Apply(Txn{Zxid: zxid, Session: sess, Owner: 1, Ops: []Op{{Type: OpRevalidateSession}}}); r[0].Err != zkproto.ErrSessionExpired {
		t.Fatalf("revalidating a closed session: %v", r[0].Err)
	}
}

// TestSessionWithoutOwnerIsAdopted: a session created without an owner
// (standalone, or an older log) belongs to the first server writing for it.
func TestSessionWithoutOwnerIsAdopted(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/x", 0))
	for _, c := range []struct {
		owner int64
		want  zkproto.Err
	}{{3, zkproto.ErrOK}, {3, zkproto.ErrOK}, {1, zkproto.ErrSessionMoved}} {
		txn := h.txn(Op{Type: zkproto.OpSetData, Path: "/x", Version: -1})
		txn.Owner = c.owner
		if r, _ := h.tree.Apply(txn); r[0].Err != c.want {
			t.Fatalf("owner %d: %v, want %v", c.owner, r[0].Err, c.want)
		}
	}
}

// TestSnapshotVersion1Reads: a snapshot written before session owners
// (magic ...\x01, sessions without an owner) still loads.
func TestSnapshotVersion1Reads(t *testing.T) {
	h := newHarness(t, Options{})
	h.must(create("/x", 0))
	var buf bytes.Buffer
	if err := h.tree.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	// Rewrite as version 1: drop each session's owner, fix the checksum.
	off := len(snapMagic) + 8
	r := zkproto.NewReader(b[off:])
	for n := r.Int(); n > 0; n-- {
		zkproto.DecodeACLs(r)
	}
	sessAt := len(b) - r.Len()
	if n := binary.BigEndian.Uint32(b[sessAt:]); n != 1 {
		t.Fatalf("%d sessions in the snapshot, want 1", n)
	}
	var v1 []byte
	v1 = append(v1, b[:sessAt+4+8+4]...)
	v1 = append(v1, b[sessAt+4+8+4+8:len(b)-4]...)
	v1[len(snapMagic)-1] = 1
	v1 = binary.BigEndian.AppendUint32(v1, crc32.Checksum(v1, crcTable))
	got, err := ReadSnapshot(bytes.NewReader(v1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := got.SessionOwner(sess); !ok || o != 0 {
		t.Fatalf("session after a v1 snapshot: owner %d open %v", o, ok)
	}
	assertSameTree(t, h.tree, got)
}
