package znode

import (
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// TestDataSize: paths count in UTF-16 units and data in bytes, as
// DataTree's nodeDataSize; creates, setData and deletes move it.
func TestDataSize(t *testing.T) {
	h := newHarness(t, Options{})
	// "/" + "/zookeeper" + "/zookeeper/quota" + "/zookeeper/config"
	// (Apache ZooKeeper 3.8 standalone reports 44 at start).
	if got := h.tree.DataSize(); got != 44 {
		t.Fatalf("fresh tree: %d, want 44", got)
	}
	h.must(create("/a", 0))                                                                      // 2 + 1
	h.must(Op{Type: zkproto.OpCreate, Path: "/\u00e9\u4e2d", Data: []byte("xyz"), ACL: openACL}) // 1+1+1 + 3 (UTF-16 units, not bytes)
	h.must(setData("/a", "hello", -1))                                                           // +4
	if got, want := h.tree.DataSize(), int64(44+3+6+4); got != want {
		t.Fatalf("after writes: %d, want %d", got, want)
	}
	h.must(del("/a", -1))
	if got, want := h.tree.DataSize(), int64(44+6); got != want {
		t.Fatalf("after delete: %d, want %d", got, want)
	}
}
