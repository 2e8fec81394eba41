package znode

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// Run: go test -run XXX -bench . -benchmem ./store/znode/
// The 1M-znode heap measurement: go test -run XXX -bench HeapPerZnode ./store/znode/

var value100 = make([]byte, 100)

func benchTree(b testing.TB, n int) (*Tree, []string) {
	tr := New(Options{})
	tr.Apply(Txn{Zxid: 1, Session: sess, Ops: []Op{{Type: zkproto.OpCreateSession}}})
	tr.Apply(Txn{Zxid: 2, Session: sess, Ops: []Op{create("/bench", 0)}})
	paths := make([]string, n)
	op := Op{Type: zkproto.OpCreate, Data: value100, ACL: openACL}
	txn := Txn{Session: sess, Ops: []Op{op}}
	for i := range paths {
		paths[i] = "/bench/n" + strconv.Itoa(10000000+i)
		txn.Zxid = int64(3 + i)
		txn.Ops[0].Path = paths[i]
		if res, _ := tr.Apply(txn); res[0].Err != 0 {
			b.Fatal(res[0].Err)
		}
	}
	return tr, paths
}

func BenchmarkApplyCreate(b *testing.B) {
	tr, _ := benchTree(b, 0)
	txn := Txn{Session: sess, Ops: []Op{{Type: zkproto.OpCreate, Data: value100, ACL: openACL}}}
	paths := make([]string, b.N)
	for i := range paths {
		paths[i] = fmt.Sprintf("/bench/n%010d", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		txn.Zxid = int64(10 + i)
		txn.Ops[0].Path = paths[i]
		tr.Apply(txn)
	}
}

func BenchmarkApplySetData(b *testing.B) {
	tr, paths := benchTree(b, 100000)
	txn := Txn{Session: sess, Ops: []Op{{Type: zkproto.OpSetData, Data: value100, Version: -1}}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		txn.Zxid = int64(200000 + i)
		txn.Ops[0].Path = paths[i%len(paths)]
		tr.Apply(txn)
	}
}

func BenchmarkGet(b *testing.B) {
	tr, paths := benchTree(b, 100000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := tr.Get(paths[(i*7919)%len(paths)]); err != 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetData is a client's getData: the ACL check and the read, as
// two lookups (CheckACL, then Get) or one (GetChecked).
func BenchmarkGetData(b *testing.B) {
	tr, paths := benchTree(b, 100000)
	ids := []zkproto.ID{{Scheme: "ip", ID: "127.0.0.1"}}
	b.Run("CheckACL+Get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			p := paths[(i*7919)%len(paths)]
			if tr.CheckACL(p, zkproto.PermRead, ids, false) != 0 {
				b.Fatal("acl")
			}
			if _, _, err := tr.Get(p); err != 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetChecked", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, err := tr.GetChecked(paths[(i*7919)%len(paths)], zkproto.PermRead, ids, false); err != 0 {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkChildren1000(b *testing.B) {
	tr, _ := benchTree(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.Children("/bench")
	}
}

// BenchmarkHeapPerZnode builds one million znodes with 100-byte values
// (paths like /bench/n10000000) and reports the live heap per znode.
func BenchmarkHeapPerZnode(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr, paths := benchTree(b, 1000000)
		paths = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		n := tr.NodeCount()
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heapB/znode")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heapMB")
		runtime.KeepAlive(tr)
		runtime.KeepAlive(paths)
	}
}

// TestHeapPerZnode pins the live heap of a tree of 100k znodes of 100
// bytes (paths /bench/n10000000...): one 80-byte node and one allocation
// for key, data, ACL index and aversion, an ACL list shared by all (the
// index), and the btree's slots. About 227 bytes today; copying the ACL
// into every node or a pointer per stat field would break the bound.
func TestHeapPerZnode(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes the heap")
	}
	const n, bound = 100000, 240
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr, paths := benchTree(t, n)
	paths = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(tr.NodeCount())
	runtime.KeepAlive(tr)
	runtime.KeepAlive(paths)
	t.Logf("%.0f heap bytes per znode", per)
	if per > bound {
		t.Errorf("%.0f heap bytes per znode, want at most %d", per, bound)
	}
}

func TestReadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	h := newHarness(t, Options{})
	h.must(create("/a", 0))
	h.must(create("/a/b", 0))
	checks := map[string]func(){
		"Get":      func() { h.tree.Get("/a/b") },
		"Stat":     func() { h.tree.Stat("/a") },
		"ACL":      func() { h.tree.ACL("/a") },
		"CheckACL": func() { h.tree.CheckACL("/a", zkproto.PermRead, nil, false) },
		"GetChecked": func() {
			h.tree.GetChecked("/a/b", zkproto.PermRead, []zkproto.ID{{Scheme: "ip", ID: "127.0.0.1"}}, false)
		},
		"Missing": func() { h.tree.Get("/nope/x") },
		"Count":   func() { h.tree.AllChildrenNumber("/a") },
	}
	for name, f := range checks {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs", name, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { h.tree.Children("/a") }); n > 1 {
		t.Errorf("Children: %v allocs", n)
	}
}

// TestApplyAllocs pins the allocations of the hot writes: setData builds
// one new node (struct and kd), plus the results and events Apply returns.
func TestApplyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	h := newHarness(t, Options{})
	h.must(create("/a", 0))
	h.must(create("/a/b", 0))
	txn := Txn{Session: sess, Ops: []Op{{Type: zkproto.OpSetData, Path: "/a/b", Data: value100, Version: -1}}}
	zxid := int64(100)
	n := testing.AllocsPerRun(100, func() {
		zxid++
		txn.Zxid = zxid
		h.tree.Apply(txn)
	})
	if n > 4 {
		t.Errorf("setData: %v allocs, want <= 4", n)
	}
}
