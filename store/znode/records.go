package znode

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zkafka/zkafka/zkproto"
)

// Record is one znode with every field ZooKeeper persists (StatPersisted),
// the shape in which trees move to and from other formats (Apache
// ZooKeeper's snapshots, see store/apachezk). Cversion is the persisted
// cversion (child creates; see the package invariants), not the one a
// client sees; Owner is the raw ephemeralOwner (a session, a container or
// a TTL encoding). numChildren is not part of it: it follows from the paths.
type Record struct {
	Path                              string
	Data                              []byte // nil = null
	ACL                               []zkproto.ACL
	Czxid, Mzxid, Pzxid, Ctime, Mtime int64
	Owner                             int64
	Version, Cversion, Aversion       int32
}

// Session is an open session as a tree holds it.
type Session struct {
	ID      int64
	Timeout int32 // ms
	Owner   int64 // the myid of the server that owns it; 0 = none
}

// Build makes a tree out of records (in any order) and sessions, with
// lastZxid as its LastZxid. It refuses what ReadSnapshot refuses: no
// root, a duplicate, a node whose parent is missing, a bad path.
func Build(opts Options, lastZxid int64, sessions []Session, records []Record) (*Tree, error) {
	t := newEmpty(opts)
	t.lastZxid = lastZxid
	for _, s := range sessions {
		t.sessions.ReplaceOrInsert(sessionRec{id: s.ID, timeout: s.Timeout, owner: s.Owner})
	}
	order := make([]int, len(records))
	keys := make([]string, len(records))
	for i := range records {
		order[i] = i
		if p := records[i].Path; p == "/" || ValidatePath(p) {
			keys[i] = keyOf(p)
		} else {
			return nil, fmt.Errorf("%w: node %q", ErrCorrupt, p)
		}
	}
	// Parents sort before their children in key order.
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	for _, i := range order {
		r := &records[i]
		n := &node{czxid: r.Czxid, mzxid: r.Mzxid, pzxid: r.Pzxid, ctime: r.Ctime, mtime: r.Mtime,
			owner: r.Owner, version: r.Version, cversion: r.Cversion, klen: int32(len(keys[i]))}
		n.kd = buildKD(keys[i], r.Data, t.internACL(r.ACL), r.Aversion)
		if t.nodes.Has(n) {
			return nil, fmt.Errorf("%w: duplicate node %q", ErrCorrupt, r.Path)
		}
		if r.Path != "/" {
			parent := t.get(parentOf(r.Path))
			if parent == nil {
				return nil, fmt.Errorf("%w: orphan node %q", ErrCorrupt, r.Path)
			}
			parent.numChildren++ // not shared yet: the tree is being built
		}
		t.replace(nil, n)
	}
	if t.get("/") == nil {
		return nil, fmt.Errorf("%w: no root", ErrCorrupt)
	}
	t.recomputeQuotaStats()
	return t, nil
}

// recomputeQuotaStats sets every zookeeper_stats node under
// /zookeeper/quota from the subtree it tracks, as ZooKeeper's
// DataTree.setupQuota does after loading a snapshot (the records may come
// from a tree that did not keep them, such as an imported one).
func (t *Tree) recomputeQuotaStats() {
	var stats []string
	t.scan(QuotaRoot, '/', func(n *node) bool {
		if p := n.path(); strings.HasSuffix(p, "/"+QuotaStatNode) {
			stats = append(stats, p)
		}
		return true
	})
	for _, p := range stats {
		t.setQuotaStats(p, parentOf(p)[len(QuotaRoot):])
	}
}

// Records calls fn with every node, parents before their children, until
// fn returns false. The Data and ACL it passes must not be modified. Call
// it on a Clone while the tree keeps applying.
func (t *Tree) Records(fn func(Record) bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	t.nodes.Ascend(func(n *node) bool {
		return fn(Record{Path: n.path(), Data: n.data(), ACL: t.acls[n.aclIndex()],
			Czxid: n.czxid, Mzxid: n.mzxid, Pzxid: n.pzxid, Ctime: n.ctime, Mtime: n.mtime,
			Owner: n.owner, Version: n.version, Cversion: n.cversion, Aversion: n.aversion()})
	})
}

// SessionList returns the open sessions in id order.
func (t *Tree) SessionList() []Session {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Session, 0, t.sessions.Len())
	t.sessions.Ascend(func(s sessionRec) bool {
		out = append(out, Session{ID: s.id, Timeout: s.timeout, Owner: s.owner})
		return true
	})
	return out
}
