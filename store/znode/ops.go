package znode

import (
	"github.com/zkafka/zkafka/internal/javahash"

	"sort"

	"strings"

	"github.com/zkafka/zkafka/zkproto"
)

// The checks of each op run in the order of PrepRequestProcessor.pRequest2Txn
// (ZooKeeper 3.8); the first failing check gives the error. t.mu is held for
// writing by Apply.

// checkSession is SessionTracker.checkSession: a write from a session that is
// not open (expired or closed before the write was applied) fails, and so
// does a write that came through a server that no longer owns the session
// (SessionMoved). A session without an owner (created by a standalone
// server) is adopted by the first server that writes through it, as
// ZooKeeper's leader adopts a session it has no owner for.
func (t *Tree) checkSession(txn *Txn) zkproto.Err {
	if txn.Session == 0 {
		return zkproto.ErrOK
	}
	s, ok := t.sessions.Get(sessionRec{id: txn.Session})
	if !ok {
		return zkproto.ErrSessionExpired
	}
	if txn.Owner != 0 {
		switch s.owner {
		case txn.Owner:
		case 0:
			s.owner = txn.Owner
			t.sessions.ReplaceOrInsert(s)
		default:
			return zkproto.ErrSessionMoved
		}
	}
	return zkproto.ErrOK
}

// revalidateSession makes txn.Owner the owner of txn.Session.
func (t *Tree) revalidateSession(txn *Txn) zkproto.Err {
	s, ok := t.sessions.Get(sessionRec{id: txn.Session})
	if !ok || txn.Session == 0 {
		return zkproto.ErrSessionExpired
	}
	s.owner = txn.Owner
	t.sessions.ReplaceOrInsert(s)
	return zkproto.ErrOK
}

func (t *Tree) checkData(data []byte) zkproto.Err {
	if len(data) > t.opts.MaxDataBytes {
		return zkproto.ErrBadArguments
	}
	return zkproto.ErrOK
}

func firstErr(errs ...func() zkproto.Err) zkproto.Err {
	for _, f := range errs {
		if err := f(); err != zkproto.ErrOK {
			return err
		}
	}
	return zkproto.ErrOK
}

// validateCreate covers CreateMode.fromFlag, validateCreateRequest (TTL,
// then the session) and the data size.
func (t *Tree) validateCreate(txn *Txn, op *Op, typ zkproto.OpCode) zkproto.Err {
	mode := op.Mode
	if !mode.Valid() {
		return zkproto.ErrBadArguments
	}
	ttl := int64(-1) // only createTTL requests carry a ttl
	if typ == zkproto.OpCreateTTL {
		ttl = op.TTL
	}
	if mode.TTL() && !t.opts.ExtendedTypes {
		return zkproto.ErrUnimplemented
	}
	// A createTTL with a non-TTL mode crashes ZooKeeper's DataTree; refuse it.
	if !validTTL(mode, ttl) || typ == zkproto.OpCreateTTL && !mode.TTL() {
		return zkproto.ErrBadArguments
	}
	if err := t.checkSession(txn); err != zkproto.ErrOK {
		return err
	}
	if txn.Session == 0 && mode.Ephemeral() && typ != zkproto.OpCreateContainer {
		return zkproto.ErrSessionExpired
	}
	return t.checkData(op.Data)
}

func (t *Tree) create(txn *Txn, op *Op, typ zkproto.OpCode, ev *[]Event) (string, zkproto.Stat, zkproto.Err) {
	if err := t.validateCreate(txn, op, typ); err != zkproto.ErrOK {
		return "", zkproto.Stat{}, err
	}
	path := op.Path
	if !strings.Contains(path, "/") || strings.IndexByte(path, 0) >= 0 {
		return "", zkproto.Stat{}, zkproto.ErrBadArguments
	}
	acl, err := fixupACL(op.ACL, txn.Auth, txn.SASLScheme)
	if err != zkproto.ErrOK {
		return "", zkproto.Stat{}, err
	}
	parentPath := parentOf(path)
	parent := t.get(parentPath)
	if parent == nil {
		return "", zkproto.Stat{}, zkproto.ErrNoNode
	}
	if err := checkACL(t.acls[parent.aclIndex()], zkproto.PermCreate, txn.Auth, txn.Super); err != zkproto.ErrOK {
		return "", zkproto.Stat{}, err
	}
	if op.Mode.Sequential() {
		path += seqSuffix(parent.cversion)
	}
	if !ValidatePath(path) {
		return "", zkproto.Stat{}, zkproto.ErrBadArguments
	}
	if t.get(path) != nil {
		return "", zkproto.Stat{}, zkproto.ErrNodeExists
	}
	if kindOf(parent.owner, t.opts.ExtendedTypes) == kindEphemeral {
		return "", zkproto.Stat{}, zkproto.ErrNoChildrenForEphemerals
	}
	if err := t.quotaCheck(txn, path, int64(len(op.Data)), 1); err != zkproto.ErrOK {
		return "", zkproto.Stat{}, err
	}
	n := t.newNode(txn, op, typ, path, t.internACL(acl))
	p := *parent
	p.cversion++
	p.numChildren++
	p.pzxid = txn.Zxid
	t.replace(parent, &p)
	t.replace(nil, n)
	t.quotaCreated(path, len(op.Data))
	*ev = append(*ev, Event{zkproto.EventNodeCreated, path, t.acls[n.aclIndex()]},
		Event{zkproto.EventNodeChildrenChanged, eventPath(parentPath), t.acls[p.aclIndex()]})
	return path, n.stat(t.opts.ExtendedTypes), zkproto.ErrOK
}

// newNode builds a created node. Its kind follows the txn type ZooKeeper
// logs: createContainer and createTTL txns make containers and TTL nodes
// whatever the mode, a create txn makes an ephemeral or a persistent node.
func (t *Tree) newNode(txn *Txn, op *Op, typ zkproto.OpCode, path string, acl uint32) *node {
	var owner int64
	switch {
	case typ == zkproto.OpCreateContainer:
		owner = containerOwner
	case typ == zkproto.OpCreateTTL:
		owner = ttlOwner(op.TTL)
	case op.Mode.Ephemeral():
		owner = txn.Session
	}
	key := keyOf(path)
	return &node{
		kd:    buildKD(key, op.Data, acl, 0),
		klen:  int32(len(key)),
		czxid: txn.Zxid, mzxid: txn.Zxid, pzxid: txn.Zxid,
		ctime: txn.Time, mtime: txn.Time,
		owner: owner,
	}
}

func (t *Tree) delete(txn *Txn, op *Op, ev *[]Event) zkproto.Err {
	if err := t.checkSession(txn); err != zkproto.ErrOK {
		return err
	}
	parentPath, ok := parentForWrite(op.Path)
	if !ok {
		return zkproto.ErrBadArguments
	}
	parent := t.get(parentPath)
	if parent == nil {
		return zkproto.ErrNoNode
	}
	if err := checkACL(t.acls[parent.aclIndex()], zkproto.PermDelete, txn.Auth, txn.Super); err != zkproto.ErrOK {
		return err
	}
	n := t.get(op.Path)
	switch {
	case n == nil:
		return zkproto.ErrNoNode
	case op.Version != -1 && op.Version != n.version:
		return zkproto.ErrBadVersion
	case n.numChildren > 0:
		return zkproto.ErrNotEmpty
	}
	t.deleteNode(txn.Zxid, parent, parentPath, n, op.Path, ev)
	return zkproto.ErrOK
}

// deleteContainer is the reaper's delete: no session, ACL or version check,
// and it refuses (BadVersion) to delete an ephemeral node.
func (t *Tree) deleteContainer(txn *Txn, op *Op, ev *[]Event) zkproto.Err {
	parentPath, ok := parentForWrite(op.Path)
	if !ok {
		return zkproto.ErrBadArguments
	}
	n := t.get(op.Path)
	switch {
	case n == nil:
		return zkproto.ErrNoNode
	case n.numChildren > 0:
		return zkproto.ErrNotEmpty
	case kindOf(n.owner, t.opts.ExtendedTypes) == kindEphemeral:
		return zkproto.ErrBadVersion
	}
	parent := t.get(parentPath)
	if parent == nil {
		return zkproto.ErrNoNode
	}
	t.deleteNode(txn.Zxid, parent, parentPath, n, op.Path, ev)
	return zkproto.ErrOK
}

// deleteNode removes n. As in DataTree.deleteNode the parent's persisted
// cversion does not change (its visible cversion does, through numChildren).
func (t *Tree) deleteNode(zxid int64, parent *node, parentPath string, n *node, path string, ev *[]Event) {
	p := *parent
	p.numChildren--
	if zxid > p.pzxid {
		p.pzxid = zxid
	}
	t.replace(parent, &p)
	t.remove(n)
	if prefix := t.quotaPrefix(path); prefix != "" {
		t.updateQuotaStat(prefix, -int64(n.dataLen()), -1)
	}
	*ev = append(*ev, Event{zkproto.EventNodeDeleted, path, t.acls[n.aclIndex()]},
		Event{zkproto.EventNodeChildrenChanged, eventPath(parentPath), t.acls[p.aclIndex()]})
}

func (t *Tree) setData(txn *Txn, op *Op, ev *[]Event) (zkproto.Stat, zkproto.Err) {
	var n *node
	err := firstErr(
		func() zkproto.Err { return t.checkSession(txn) },
		func() zkproto.Err { return t.checkData(op.Data) },
		func() zkproto.Err { return validErr(op.Path) },
		func() zkproto.Err { n = t.get(op.Path); return exists(n) },
		func() zkproto.Err { return t.allowed(n, zkproto.PermWrite, txn) },
		func() zkproto.Err { return t.quotaCheck(txn, op.Path, int64(len(op.Data)-n.dataLen()), 0) },
		func() zkproto.Err { return versionErr(op.Version, n.version) },
	)
	if err != zkproto.ErrOK {
		return zkproto.Stat{}, err
	}
	c := n.withData(op.Data)
	c.version = n.version + 1
	c.mtime = txn.Time
	c.mzxid = txn.Zxid
	t.replace(n, c)
	if prefix := t.quotaPrefix(op.Path); prefix != "" {
		t.updateQuotaStat(prefix, int64(len(op.Data)-n.dataLen()), 0)
	}
	*ev = append(*ev, Event{zkproto.EventNodeDataChanged, op.Path, t.acls[c.aclIndex()]})
	return c.stat(t.opts.ExtendedTypes), zkproto.ErrOK
}

func (t *Tree) setACL(txn *Txn, op *Op) (zkproto.Stat, zkproto.Err) {
	var n *node
	var acl []zkproto.ACL
	err := firstErr(
		func() zkproto.Err { return t.checkSession(txn) },
		func() zkproto.Err { return validErr(op.Path) },
		func() (e zkproto.Err) { acl, e = fixupACL(op.ACL, txn.Auth, txn.SASLScheme); return e },
		func() zkproto.Err { n = t.get(op.Path); return exists(n) },
		func() zkproto.Err { return t.allowed(n, zkproto.PermAdmin, txn) },
		func() zkproto.Err { return versionErr(op.Version, n.aversion()) },
	)
	if err != zkproto.ErrOK {
		return zkproto.Stat{}, err
	}
	c := n.withACL(t.internACL(acl), n.aversion()+1)
	t.replace(n, c)
	return c.stat(t.opts.ExtendedTypes), zkproto.ErrOK
}

func (t *Tree) check(txn *Txn, op *Op) zkproto.Err {
	var n *node
	return firstErr(
		func() zkproto.Err { return t.checkSession(txn) },
		func() zkproto.Err { return validErr(op.Path) },
		func() zkproto.Err { n = t.get(op.Path); return exists(n) },
		func() zkproto.Err { return t.allowed(n, zkproto.PermRead, txn) },
		func() zkproto.Err { return versionErr(op.Version, n.version) },
	)
}

func validErr(path string) zkproto.Err {
	if !ValidatePath(path) {
		return zkproto.ErrBadArguments
	}
	return zkproto.ErrOK
}

func exists(n *node) zkproto.Err {
	if n == nil {
		return zkproto.ErrNoNode
	}
	return zkproto.ErrOK
}

func (t *Tree) allowed(n *node, perm int32, txn *Txn) zkproto.Err {
	return checkACL(t.acls[n.aclIndex()], perm, txn.Auth, txn.Super)
}

func versionErr(expected, current int32) zkproto.Err {
	if expected != -1 && expected != current {
		return zkproto.ErrBadVersion
	}
	return zkproto.ErrOK
}

// createSession opens txn.Session (FileTxnSnapLog: sessions.put). The ids
// 0, math.MinInt64 and, with ExtendedTypes, any id whose high byte is 0xff
// are refused: as node owners they mean "persistent", "container" and "TTL".
func (t *Tree) createSession(txn *Txn, op *Op) zkproto.Err {
	id := txn.Session
	if kindOf(id, t.opts.ExtendedTypes) != kindEphemeral {
		return zkproto.ErrBadArguments
	}
	t.sessions.ReplaceOrInsert(sessionRec{id: id, timeout: op.SessionTimeout, owner: txn.Owner})
	return zkproto.ErrOK
}

// closeSession closes txn.Session and deletes its ephemerals in key order
// (parent path, then name), with events for each.
func (t *Tree) closeSession(txn *Txn, ev *[]Event) {
	if kindOf(txn.Session, t.opts.ExtendedTypes) != kindEphemeral {
		return // 0, containerOwner and TTL owners are not sessions
	}
	t.sessions.Delete(sessionRec{id: txn.Session})
	var keys []string
	t.byOwner(txn.Session, func(r ownerRef) bool {
		keys = append(keys, r.key)
		return true
	})
	for _, k := range ephemeralDeleteOrder(t, keys) {
		n := t.getKey(k)
		path := pathOf(k)
		parentPath := parentOf(path)
		if parent := t.get(parentPath); n != nil && parent != nil {
			t.deleteNode(txn.Zxid, parent, parentPath, n, path, ev)
		}
	}
}

// ephemeralDeleteOrder orders a closing session's ephemerals the way
// ZooKeeper deletes them: it iterates a copy of the session's
// HashSet<String> of paths, so the order (and so the order of the watch
// events) is Java's hash order; ties keep creation order.
func ephemeralDeleteOrder(t *Tree, keys []string) []string {
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := t.getKey(keys[i]), t.getKey(keys[j])
		return a != nil && b != nil && a.czxid < b.czxid
	})
	hashes := make([]int32, len(keys))
	for i, k := range keys {
		hashes[i] = javahash.String(pathOf(k))
	}
	out := make([]string, 0, len(keys))
	for _, i := range javahash.Order(hashes, javahash.CloneCapacity(len(keys))) {
		out = append(out, keys[i])
	}
	return out
}
