package znode

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

type dumpNode struct {
	Path string
	Data []byte
	Stat zkproto.Stat
	ACL  []zkproto.ACL
}

// dump lists every node of t with what a client can read of it.
func dump(t *Tree) []dumpNode {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []dumpNode
	t.nodes.Ascend(func(n *node) bool {
		out = append(out, dumpNode{n.path(), n.data(), n.stat(t.opts.ExtendedTypes), t.acls[n.aclIndex()]})
		return true
	})
	return out
}

func assertSameTree(t *testing.T, want, got *Tree) {
	t.Helper()
	w, g := dump(want), dump(got)
	if len(w) != len(g) {
		t.Fatalf("%d nodes, want %d", len(g), len(w))
	}
	for i := range w {
		if !reflect.DeepEqual(w[i], g[i]) {
			t.Fatalf("node %d:\n got  %+v\n want %+v", i, g[i], w[i])
		}
	}
	if !reflect.DeepEqual(want.Sessions(), got.Sessions()) {
		t.Fatalf("sessions %v, want %v", got.Sessions(), want.Sessions())
	}
	for id := range want.Sessions() {
		if !reflect.DeepEqual(want.Ephemerals(id, ""), got.Ephemerals(id, "")) {
			t.Fatalf("ephemerals of %d differ", id)
		}
	}
	if !reflect.DeepEqual(want.ReapCandidates(1<<60), got.ReapCandidates(1<<60)) {
		t.Fatal("reap candidates differ")
	}
}

// randomWrites applies n random writes (some failing) to h.
func randomWrites(h *harness, rng *rand.Rand, n int) {
	paths := []string{"/a", "/b", "/a/x", "/a/y", "/b/z", "/c"}
	for i := 0; i < n; i++ {
		p := paths[rng.Intn(len(paths))]
		switch rng.Intn(6) {
		case 0, 1:
			op := create(p, zkproto.CreateMode(rng.Intn(4)))
			if rng.Intn(4) == 0 {
				op = Op{Type: zkproto.OpCreateTTL, Path: p, ACL: openACL, Mode: zkproto.ModePersistentWithTTL, TTL: 100}
			}
			if rng.Intn(5) == 0 {
				op.ACL = aliceACL
			}
			h.do(op, aliceID)
		case 2:
			h.do(del(p, -1))
		case 3:
			h.do(setData(p, fmt.Sprint(i), -1), aliceID)
		case 4:
			h.do(Op{Type: zkproto.OpSetACL, Path: p, ACL: zkproto.CreatorAllACL, Version: -1}, aliceID)
		case 5:
			txn := h.txn(create(p+"/m", 0), setData(p, "multi", -1))
			txn.Multi = true
			h.tree.Apply(txn)
		}
	}
}

func TestSnapshotRoundTripUnderWrites(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	h := newHarness(t, Options{ExtendedTypes: true})
	randomWrites(h, rng, 2000)
	clone := h.tree.Clone()
	atClone := dump(h.tree)
	zxid := h.tree.LastZxid()

	done := make(chan []byte)
	go func() {
		var buf bytes.Buffer
		if err := clone.WriteSnapshot(&buf); err != nil {
			t.Error(err)
		}
		done <- buf.Bytes()
	}()
	randomWrites(h, rng, 2000) // concurrently with the serialization
	snap := <-done

	loaded, err := ReadSnapshot(bytes.NewReader(snap), Options{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(atClone, dump(loaded)) || !reflect.DeepEqual(atClone, dump(clone)) {
		t.Fatal("snapshot differs from the tree at clone time")
	}
	assertSameTree(t, clone, loaded)
	if loaded.LastZxid() != zxid {
		t.Fatalf("lastZxid %d, want %d", loaded.LastZxid(), zxid)
	}
	// The loaded tree is writable and behaves the same as the clone.
	r1, e1 := clone.Apply(Txn{Zxid: zxid + 1, Session: sess, Ops: []Op{create("/a/new-", 2)}})
	r2, e2 := loaded.Apply(Txn{Zxid: zxid + 1, Session: sess, Ops: []Op{create("/a/new-", 2)}})
	if !reflect.DeepEqual(r1, r2) || !reflect.DeepEqual(e1, e2) {
		t.Fatalf("%v %v / %v %v", r1, e1, r2, e2)
	}
	assertSameTree(t, clone, loaded)
}

func TestSnapshotCorrupt(t *testing.T) {
	var buf bytes.Buffer
	if err := New(Options{}).WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if _, err := ReadSnapshot(bytes.NewReader(good), Options{}); err != nil {
		t.Fatal(err)
	}
	for i := range good {
		b := append([]byte(nil), good...)
		b[i] ^= 0x40
		if _, err := ReadSnapshot(bytes.NewReader(b), Options{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at %d: %v", i, err)
		}
	}
	for i := range good {
		if _, err := ReadSnapshot(bytes.NewReader(good[:i]), Options{}); err == nil {
			t.Fatalf("truncated at %d accepted", i)
		}
	}
}
