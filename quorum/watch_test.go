package quorum

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// recorder is a watcher that records what it is told.
type recorder struct {
	id  int64
	got []string
}

func (r *recorder) notify(typ zkproto.EventType, path string, _ []zkproto.ACL, _ int64) {
	r.got = append(r.got, fmt.Sprintf("%s %s", eventName(typ), path))
}
func (r *recorder) sessionID() int64 { return r.id }

// watchReg is one watch a test registers: kind on path for watcher w.
type watchReg struct {
	w    string
	kind watchKind
	path string
}

// watchEvent is one applied event and the watchers it must reach, in
// the order trigger notifies them (by session id).
type watchEvent struct {
	typ  zkproto.EventType
	path string
	want []string
}

func TestWatchManagerTrigger(t *testing.T) {
	const (
		created  = zkproto.EventNodeCreated
		changed  = zkproto.EventNodeDataChanged
		deleted  = zkproto.EventNodeDeleted
		children = zkproto.EventNodeChildrenChanged
	)
	tests := []struct {
		name   string
		regs   []watchReg
		events []watchEvent
	}{{
		name: "data watch fires once on change",
		regs: []watchReg{{"a", watchData, "/x"}},
		events: []watchEvent{
			{changed, "/x", []string{"a"}},
			{changed, "/x", nil},
		},
	}, {
		name: "exists watch fires on create",
		regs: []watchReg{{"a", watchData, "/x"}},
		events: []watchEvent{
			{created, "/x", []string{"a"}},
			{deleted, "/x", nil},
		},
	}, {
		name: "data watch: delete fires it, a child change does not",
		regs: []watchReg{{"a", watchData, "/x"}},
		events: []watchEvent{
			{children, "/x", nil},
			{deleted, "/x", []string{"a"}},
		},
	}, {
		name: "child watch: a child change and a delete fire it, a data change does not",
		regs: []watchReg{{"a", watchChild, "/x"}, {"b", watchChild, "/y"}},
		events: []watchEvent{
			{changed, "/x", nil},
			{created, "/x", nil},
			{children, "/x", []string{"a"}},
			{children, "/x", nil},
			{deleted, "/y", []string{"b"}},
		},
	}, {
		name: "every watcher of the path, each once, by session id",
		regs: []watchReg{{"b", watchData, "/x"}, {"a", watchData, "/x"}, {"c", watchData, "/other"}},
		events: []watchEvent{
			{changed, "/x", []string{"a", "b"}},
		},
	}, {
		name: "persistent watch fires for all four on its path and stays",
		regs: []watchReg{{"a", watchPersistent, "/x"}},
		events: []watchEvent{
			{created, "/x", []string{"a"}},
			{changed, "/x", []string{"a"}},
			{children, "/x", []string{"a"}},
			{changed, "/x/c", nil},
			{deleted, "/x", []string{"a"}},
			{created, "/x", []string{"a"}},
		},
	}, {
		name: "recursive watch fires for its path and descendants, not for child changes",
		regs: []watchReg{{"a", watchRecursive, "/x"}},
		events: []watchEvent{
			{created, "/x", []string{"a"}},
			{created, "/x/c", []string{"a"}},
			{changed, "/x/c/d", []string{"a"}},
			{deleted, "/x/c", []string{"a"}},
			{children, "/x", nil},
			{changed, "/xy", nil},
			{changed, "/", nil},
		},
	}, {
		name: "recursive watch on the root sees everything",
		regs: []watchReg{{"a", watchRecursive, "/"}},
		events: []watchEvent{
			{changed, "/", []string{"a"}},
			{created, "/a/b", []string{"a"}},
		},
	}, {
		name: "one event reaches a watcher once whatever its watches",
		regs: []watchReg{
			{"a", watchData, "/x"}, {"a", watchChild, "/x"}, {"a", watchPersistent, "/x"},
			{"a", watchRecursive, "/"}, {"a", watchRecursive, "/x"},
		},
		events: []watchEvent{
			{deleted, "/x", []string{"a"}},
			// The one-shot watches are spent; the persistent ones remain.
			{created, "/x", []string{"a"}},
		},
	}, {
		name: "a watch registered twice is one watch",
		regs: []watchReg{{"a", watchData, "/x"}, {"a", watchData, "/x"}},
		events: []watchEvent{
			{changed, "/x", []string{"a"}},
			{changed, "/x", nil},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newWatchManager()
			ws := map[string]*recorder{}
			for _, r := range tc.regs {
				if ws[r.w] == nil {
					ws[r.w] = &recorder{id: int64(r.w[0])}
				}
				m.add(r.kind, r.path, ws[r.w])
			}
			for i, ev := range tc.events {
				for _, w := range ws {
					w.got = nil
				}
				// collect gives the order in which trigger notifies.
				var order []string
				for _, wt := range m.collect(ev.typ, ev.path) {
					order = append(order, string(rune(wt.sessionID())))
					wt.notify(ev.typ, ev.path, nil, 0)
				}
				if !reflect.DeepEqual(order, ev.want) {
					t.Fatalf("event %d (%s %s): notified %v, want %v", i, eventName(ev.typ), ev.path, order, ev.want)
				}
				for _, name := range ev.want {
					if want := eventName(ev.typ) + " " + ev.path; len(ws[name].got) != 1 || ws[name].got[0] != want {
						t.Fatalf("event %d: %s got %v, want [%s]", i, name, ws[name].got, want)
					}
				}
			}
		})
	}
}

// TestWatchManagerTriggerPassesACL: trigger passes the node's ACL to the
// watcher (which drops what it may not read); a one-shot watch is spent
// either way.
func TestWatchManagerTriggerPassesACL(t *testing.T) {
	m := newWatchManager()
	var gotACL []zkproto.ACL
	w := &aclRecorder{acl: &gotACL}
	m.add(watchData, "/x", w)
	m.trigger(zkproto.EventNodeDataChanged, "/x", zkproto.CreatorAllACL, 7)
	if !reflect.DeepEqual(gotACL, zkproto.CreatorAllACL) {
		t.Fatalf("watcher got ACL %v, want %v", gotACL, zkproto.CreatorAllACL)
	}
	if m.has(watchData, "/x", w) {
		t.Fatal("the one-shot watch was not spent")
	}
}

type aclRecorder struct{ acl *[]zkproto.ACL }

func (a *aclRecorder) notify(_ zkproto.EventType, _ string, acl []zkproto.ACL, _ int64) {
	*a.acl = acl
}
func (a *aclRecorder) sessionID() int64 { return 1 }

func TestWatchManagerRemove(t *testing.T) {
	m := newWatchManager()
	a, b := &recorder{id: 1}, &recorder{id: 2}
	m.add(watchData, "/x", a)
	m.add(watchData, "/x", b)
	m.add(watchRecursive, "/r", a)
	tests := []struct {
		kind watchKind
		path string
		w    *recorder
		want bool
	}{
		{watchChild, "/x", a, false}, // another kind
		{watchData, "/y", a, false},  // another path
		{watchData, "/x", a, true},
		{watchData, "/x", a, false}, // already gone
		{watchRecursive, "/r", a, true},
	}
	for i, tc := range tests {
		if got := m.remove(tc.kind, tc.path, tc.w); got != tc.want {
			t.Fatalf("remove %d: got %v, want %v", i, got, tc.want)
		}
	}
	if !m.has(watchData, "/x", b) {
		t.Fatal("removing a's watch removed b's")
	}
	if m.mu.recursiveCount != 0 {
		t.Fatalf("recursiveCount %d after the last recursive watch went", m.mu.recursiveCount)
	}
	if got := m.collect(zkproto.EventNodeDataChanged, "/x"); len(got) != 1 || got[0] != watcher(b) {
		t.Fatalf("after removal /x fires %v, want only b", got)
	}
}

// TestWatchManagerRemoveWatcher: a closed connection's watches all go,
// whatever their kind, and the others' stay (what wchs, wchc and wchp
// report follows). As in ZooKeeper 3.8, wchs/wchc/wchp count the data
// table (data, persistent and recursive watches, one per path and
// watcher); all adds the child table (child and persistent watches).
func TestWatchManagerRemoveWatcher(t *testing.T) {
	m := newWatchManager()
	a, b := &recorder{id: 1}, &recorder{id: 2}
	for _, k := range []watchKind{watchData, watchChild, watchPersistent, watchRecursive} {
		m.add(k, "/x", a)
	}
	m.add(watchData, "/a-only", a)
	m.add(watchChild, "/x", b)
	m.add(watchRecursive, "/b", b)

	if got, want := m.counts(), (watchCounts{connections: 2, paths: 3, watches: 3, all: 5}); got != want {
		t.Fatalf("counts before: %+v, want %+v", got, want)
	}
	m.removeWatcher(a)
	if got, want := m.counts(), (watchCounts{connections: 1, paths: 1, watches: 1, all: 2}); got != want {
		t.Fatalf("counts after: %+v, want %+v", got, want)
	}
	if got, want := m.bySession(), map[int64][]string{2: {"/b"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("bySession: %v, want %v", got, want)
	}
	if got, want := m.byPath(), map[string][]int64{"/b": {2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("byPath: %v, want %v", got, want)
	}
	if m.mu.recursiveCount != 1 {
		t.Fatalf("recursiveCount %d, want 1 (b's)", m.mu.recursiveCount)
	}
	for _, ev := range []zkproto.EventType{zkproto.EventNodeCreated, zkproto.EventNodeChildrenChanged} {
		for _, wt := range m.collect(ev, "/x") {
			if wt == watcher(a) {
				t.Fatalf("%s /x still reaches the removed watcher", eventName(ev))
			}
		}
	}
}

func TestParentPath(t *testing.T) {
	for in, want := range map[string]string{"/": "/", "/a": "/", "/a/b": "/a", "/a/b/c": "/a/b"} {
		if got := parentPath(in); got != want {
			t.Errorf("parentPath(%q) = %q, want %q", in, got, want)
		}
	}
}
