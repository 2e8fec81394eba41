package znode

import (
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/zkafka/zkafka/zkproto"
)

// Reads look a path up as given, without validating it (ZooKeeper's reads
// do not validate either): a malformed path is simply not found. The empty
// path is ZooKeeper's alias of the root. Reads do not check ACLs: callers
// use CheckACL, as FinalRequestProcessor does, before or after reading.

// Get returns the data and stat of path, or ErrNoNode. The data is nil for
// a node created with null data. It is shared with the tree and must not be
// modified.
func (t *Tree) Get(path string) ([]byte, zkproto.Stat, zkproto.Err) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := t.get(path)
	if n == nil {
		return nil, zkproto.Stat{}, zkproto.ErrNoNode
	}
	return n.data(), n.stat(t.opts.ExtendedTypes), zkproto.ErrOK
}

// GetChecked is CheckACL(path, perm, ids, super) followed by Get(path)
// with a single lookup, under one read lock: ErrNoNode, ErrNoAuth, or the
// data and stat (ZooKeeper's getData: the node, then its ACL).
func (t *Tree) GetChecked(path string, perm int32, ids []zkproto.ID, super bool) ([]byte, zkproto.Stat, zkproto.Err) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := t.get(path)
	if n == nil {
		return nil, zkproto.Stat{}, zkproto.ErrNoNode
	}
	if err := checkACL(t.acls[n.aclIndex()], perm, ids, super); err != zkproto.ErrOK {
		return nil, zkproto.Stat{}, err
	}
	return n.data(), n.stat(t.opts.ExtendedTypes), zkproto.ErrOK
}

// Stat returns the stat of path, or ErrNoNode.
func (t *Tree) Stat(path string) (zkproto.Stat, zkproto.Err) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := t.get(path)
	if n == nil {
		return zkproto.Stat{}, zkproto.ErrNoNode
	}
	return n.stat(t.opts.ExtendedTypes), zkproto.ErrOK
}

// Children returns the names of the children of path, sorted bytewise
// (ZooKeeper's order is a HashSet's, i.e. unspecified), and its stat.
// It visits only the children: they are one contiguous key range.
func (t *Tree) Children(path string) ([]string, zkproto.Stat, zkproto.Err) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := t.get(path)
	if n == nil {
		return nil, zkproto.Stat{}, zkproto.ErrNoNode
	}
	names := make([]string, 0, n.numChildren)
	t.children(path, func(c *node) bool {
		k := c.key()
		names = append(names, k[strings.IndexByte(k, 0)+1:])
		return true
	})
	return names, n.stat(t.opts.ExtendedTypes), zkproto.ErrOK
}

// children calls fn for each child of path in key order. t.mu must be held.
func (t *Tree) children(path string, fn func(*node) bool) {
	t.scan(path, 0, func(c *node) bool {
		if c.klen == 1 { // the root's own key "\x00"
			return true
		}
		return fn(c)
	})
}

// ACL returns the ACL list and stat of path. The list is shared with the
// tree and must not be modified.
func (t *Tree) ACL(path string) ([]zkproto.ACL, zkproto.Stat, zkproto.Err) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := t.get(path)
	if n == nil {
		return nil, zkproto.Stat{}, zkproto.ErrNoNode
	}
	return t.acls[n.aclIndex()], n.stat(t.opts.ExtendedTypes), zkproto.ErrOK
}

// CheckACL returns ErrNoNode if path does not exist, ErrNoAuth if none of
// ids (the session's identities, including its "ip" id) is granted perm by
// the node's ACL, else ErrOK. super, or an id with scheme "super", passes.
func (t *Tree) CheckACL(path string, perm int32, ids []zkproto.ID, super bool) zkproto.Err {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := t.get(path)
	if n == nil {
		return zkproto.ErrNoNode
	}
	return checkACL(t.acls[n.aclIndex()], perm, ids, super)
}

// Ephemerals returns the sorted paths of the ephemeral nodes of session
// that start with prefix; an empty or "/" prefix (after trimming spaces)
// matches all (FinalRequestProcessor getEphemerals).
func (t *Tree) Ephemerals(session int64, prefix string) []string {
	if tp := strings.TrimSpace(prefix); tp == "" || tp == "/" {
		prefix = ""
	}
	t.mu.RLock()
	var out []string
	t.byOwner(session, func(r ownerRef) bool {
		if p := pathOf(r.key); strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
		return true
	})
	t.mu.RUnlock()
	sort.Strings(out)
	return out
}

// byOwner calls fn for each node owned by owner. t.mu must be held.
func (t *Tree) byOwner(owner int64, fn func(ownerRef) bool) {
	t.owners.AscendGreaterOrEqual(ownerRef{owner: owner}, func(r ownerRef) bool {
		return r.owner == owner && fn(r)
	})
}

// AllChildrenNumber returns the number of descendants of path, as
// getAllChildrenNumber counts them (the "" alias of the root counts the
// root itself too, as ZooKeeper's prefix match on "/" does).
func (t *Tree) AllChildrenNumber(path string) (int32, zkproto.Err) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.get(path) == nil {
		return 0, zkproto.ErrNoNode
	}
	if path == "/" || path == "" {
		n := int32(t.nodes.Len()) - 1
		if path == "" {
			n++
		}
		return n, zkproto.ErrOK
	}
	var n int32
	count := func(*node) bool { n++; return true }
	t.scan(path, 0, count)   // children: path+"\x00"...
	t.scan(path, '/', count) // deeper: path+"/"...
	return n, zkproto.ErrOK
}

// LastZxid returns the zxid of the last applied txn.
func (t *Tree) LastZxid() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.lastZxid
}

// NodeCount returns the number of znodes, the root and system nodes
// included. ZooKeeper's zk_znode_count is one more (it counts its "" alias).
func (t *Tree) NodeCount() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.nodes.Len()
}

// Sessions returns a copy of the open sessions: id → timeout (ms).
func (t *Tree) Sessions() map[int64]int32 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	m := make(map[int64]int32, t.sessions.Len())
	t.sessions.Ascend(func(s sessionRec) bool {
		m[s.id] = s.timeout
		return true
	})
	return m
}

// SessionOwner returns the myid of the server that owns session id (0 when
// it has none) and whether the session is open.
func (t *Tree) SessionOwner(id int64) (int64, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	s, ok := t.sessions.Get(sessionRec{id: id})
	return s.owner, ok
}

// SessionExists reports whether session id is open.
func (t *Tree) SessionExists(id int64) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.sessions.Has(sessionRec{id: id})
}

// ReapCandidates lists, sorted, what ZooKeeper's ContainerManager would
// delete at time now (ms): containers without children whose cversion
// (creates of children) is > 0, or that never had a child and whose mtime
// is older than ContainerMaxNeverUsedMs; and, with ExtendedTypes, TTL nodes
// without children with now - mtime > ttl. The caller proposes an
// OpDeleteContainer for each (session 0).
func (t *Tree) ReapCandidates(now int64) []string {
	t.mu.RLock()
	var out []string
	visit := func(r ownerRef) bool {
		k := kindOf(r.owner, t.opts.ExtendedTypes)
		if k != kindContainer && k != kindTTL {
			return true
		}
		n := t.getKey(r.key)
		if n != nil && n.numChildren == 0 && t.expired(n, k, now) {
			out = append(out, n.path())
		}
		return true
	}
	t.byOwner(containerOwner, visit)
	if t.opts.ExtendedTypes { // TTL owners: [0xff00000000000000, -1]
		t.owners.AscendRange(ownerRef{owner: extendedMask}, ownerRef{owner: 0}, visit)
	}
	t.mu.RUnlock()
	sort.Strings(out)
	return out
}

func (t *Tree) expired(n *node, k ownerKind, now int64) bool {
	if k == kindTTL {
		ttl := n.owner & ttlValueMask
		return ttl != 0 && now-n.mtime > ttl
	}
	if n.cversion > 0 {
		return true
	}
	max := t.opts.ContainerMaxNeverUsedMs
	return max != 0 && now-n.mtime > max
}

// DataSize is ZooKeeper's approximate data size (mntr's
// zk_approximate_data_size, DataTree.cachedApproximateDataSize): the length
// of every znode's path, in UTF-16 code units as Java counts it, plus the
// length of its data. It walks the whole tree.
func (t *Tree) DataSize() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var n int64
	t.nodes.Ascend(func(nd *node) bool {
		// A key is as long as its path (one '/' is stored as 0x00).
		for _, r := range nd.key() {
			n += int64(utf16.RuneLen(r))
		}
		n += int64(nd.dataLen())
		return true
	})
	return n
}
