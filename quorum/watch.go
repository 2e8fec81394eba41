package quorum

import (
	"sort"
	"strings"
	"sync"

	"github.com/zkafka/zkafka/zkproto"
)

// watcher receives watch notifications. A connection is a watcher.
type watcher interface {
	// notify delivers an event about a node whose ACL is acl; the watcher
	// drops it unless it may READ the node (ZooKeeper 3.8). A nil acl
	// means no check.
	notify(typ zkproto.EventType, path string, acl []zkproto.ACL, zxid int64)
	sessionID() int64
}

// watchKind names a watch table.
type watchKind int

const (
	watchData       watchKind = iota // exists and getData watches, one-shot
	watchChild                       // getChildren watches, one-shot
	watchPersistent                  // addWatch PERSISTENT
	watchRecursive                   // addWatch PERSISTENT_RECURSIVE
	numWatchKinds
)

// watchSet is the watchers registered on one path in one table.
type watchSet map[watcher]struct{}

// watchManager holds every watch of this server's clients. ZooKeeper's rules:
// NodeCreated and NodeDataChanged fire data watches; NodeDeleted fires data
// and child watches; NodeChildrenChanged fires child watches of the parent.
// Persistent watches fire for all four on their path and stay; recursive
// watches fire for their path and every descendant, except
// NodeChildrenChanged. One event reaches a watcher at most once.
type watchManager struct {
	mu struct {
		sync.Mutex
		tables [numWatchKinds]map[string]watchSet
		// recursiveCount lets trigger skip the ancestor walk when no
		// recursive watch exists.
		recursiveCount int
	}
}

func newWatchManager() *watchManager {
	w := &watchManager{}
	for i := range w.mu.tables {
		w.mu.tables[i] = map[string]watchSet{}
	}
	return w
}

// add registers a watch of kind on path for wt.
func (m *watchManager) add(kind watchKind, path string, wt watcher) {
	m.mu.Lock()
	defer m.mu.Unlock()
	set := m.mu.tables[kind][path]
	if set == nil {
		set = watchSet{}
		m.mu.tables[kind][path] = set
	}
	if _, ok := set[wt]; !ok && kind == watchRecursive {
		m.mu.recursiveCount++
	}
	set[wt] = struct{}{}
}

// has reports whether wt has a watch of kind on path.
func (m *watchManager) has(kind watchKind, path string, wt watcher) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.mu.tables[kind][path][wt]
	return ok
}

// remove drops wt's watch of kind on path and reports whether it was there.
func (m *watchManager) remove(kind watchKind, path string, wt watcher) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.removeLocked(kind, path, wt)
}

func (m *watchManager) removeLocked(kind watchKind, path string, wt watcher) bool {
	set := m.mu.tables[kind][path]
	if _, ok := set[wt]; !ok {
		return false
	}
	delete(set, wt)
	if len(set) == 0 {
		delete(m.mu.tables[kind], path)
	}
	if kind == watchRecursive {
		m.mu.recursiveCount--
	}
	return true
}

// removeWatcher drops every watch of wt (its connection closed).
func (m *watchManager) removeWatcher(wt watcher) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for kind := range m.mu.tables {
		for path, set := range m.mu.tables[kind] {
			if _, ok := set[wt]; ok {
				m.removeLocked(watchKind(kind), path, wt)
			}
		}
	}
}

// trigger fires the watches that an applied event causes.
// A one-shot watch is spent even when its watcher may not read the node.
func (m *watchManager) trigger(typ zkproto.EventType, path string, acl []zkproto.ACL, zxid int64) {
	fired := m.collect(typ, path)
	for _, wt := range fired {
		wt.notify(typ, path, acl, zxid)
	}
}

// collect removes the one-shot watches an event fires and returns every
// watcher to notify, each once, in a deterministic order.
func (m *watchManager) collect(typ zkproto.EventType, path string) []watcher {
	m.mu.Lock()
	defer m.mu.Unlock()
	var seen map[watcher]struct{} // made only when a watch fires: most writes fire none
	take := func(kind watchKind, p string, oneShot bool) {
		set := m.mu.tables[kind][p]
		if len(set) > 0 && seen == nil {
			seen = make(map[watcher]struct{}, len(set))
		}
		for wt := range set {
			seen[wt] = struct{}{}
		}
		if oneShot && set != nil {
			delete(m.mu.tables[kind], p)
		}
	}
	switch typ {
	case zkproto.EventNodeCreated, zkproto.EventNodeDataChanged:
		take(watchData, path, true)
	case zkproto.EventNodeDeleted:
		take(watchData, path, true)
		take(watchChild, path, true)
	case zkproto.EventNodeChildrenChanged:
		take(watchChild, path, true)
	}
	take(watchPersistent, path, false)
	if typ != zkproto.EventNodeChildrenChanged && m.mu.recursiveCount > 0 {
		for p := path; ; p = parentPath(p) {
			take(watchRecursive, p, false)
			if p == "/" {
				break
			}
		}
	}
	if len(seen) == 0 {
		return nil
	}
	out := make([]watcher, 0, len(seen))
	for wt := range seen {
		out = append(out, wt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].sessionID() < out[j].sessionID() })
	return out
}

// ZooKeeper keeps two watch tables: dataWatches (exists and getData
// watches, persistent and persistent-recursive ones) and childWatches
// (getChildren and persistent watches). wchs, wchc and wchp report the
// data table only (DataTree.getWatches and friends); mntr's zk_watch_count
// is the size of both. A watcher counts once per path in each table.
var (
	dataTableKinds  = []watchKind{watchData, watchPersistent, watchRecursive}
	childTableKinds = []watchKind{watchChild, watchPersistent}
)

// watchCounts is what wchs reports (of the data table), and the size of
// both tables (mntr).
type watchCounts struct {
	connections int
	paths       int
	watches     int
	all         int
}

func (m *watchManager) counts() watchCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	data := m.tableLocked(dataTableKinds)
	watchers := map[watcher]struct{}{}
	var c watchCounts
	for _, set := range data {
		c.watches += len(set)
		for wt := range set {
			watchers[wt] = struct{}{}
		}
	}
	c.connections, c.paths = len(watchers), len(data)
	c.all = c.watches
	for _, set := range m.tableLocked(childTableKinds) {
		c.all += len(set)
	}
	return c
}

// tableLocked merges the tables of kinds into path -> watchers, as one
// ZooKeeper WatchManager holds them. m.mu must be held.
func (m *watchManager) tableLocked(kinds []watchKind) map[string]watchSet {
	out := map[string]watchSet{}
	for _, k := range kinds {
		for path, set := range m.mu.tables[k] {
			if len(set) == 0 {
				continue
			}
			merged := out[path]
			if merged == nil {
				merged = watchSet{}
				out[path] = merged
			}
			for wt := range set {
				merged[wt] = struct{}{}
			}
		}
	}
	return out
}

// bySession maps session id → paths with a watch in the data table (wchc);
// byPath maps path → session ids (wchp).
func (m *watchManager) bySession() map[int64][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[int64][]string{}
	for path, set := range m.tableLocked(dataTableKinds) {
		for wt := range set {
			out[wt.sessionID()] = appendUnique(out[wt.sessionID()], path)
		}
	}
	for id := range out {
		sort.Strings(out[id])
	}
	return out
}

func (m *watchManager) byPath() map[string][]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]int64{}
	for path, set := range m.tableLocked(dataTableKinds) {
		for wt := range set {
			if !containsInt64(out[path], wt.sessionID()) {
				out[path] = append(out[path], wt.sessionID())
			}
		}
	}
	for p := range out {
		sort.Slice(out[p], func(i, j int) bool { return out[p][i] < out[p][j] })
	}
	return out
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func containsInt64(list []int64, v int64) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// parentPath returns the parent of an absolute path ("/" for top-level nodes).
func parentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
