package apachezk

import (
	"fmt"
	"math"
	"strings"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// Stat is ZooKeeper's StatPersisted. Cversion counts child creates.
type Stat struct {
	Czxid, Mzxid, Ctime, Mtime  int64
	Version, Cversion, Aversion int32
	EphemeralOwner, Pzxid       int64
}

// Node is one znode of a DataTree.
type Node struct {
	Data     []byte // nil = null
	ACL      []zkproto.ACL
	Stat     Stat
	children int32
}

// DataTree is ZooKeeper's DataTree as far as its files hold it: the nodes by
// path (the root is ""), the open sessions with their timeouts (ms), and
// the zxid of the last txn applied.
type DataTree struct {
	Nodes      map[string]*Node
	Sessions   map[int64]int32
	LastZxid   int64
	ephemerals map[int64]map[string]struct{}
}

const containerOwner = math.MinInt64

func newDataTree() *DataTree {
	return &DataTree{Nodes: map[string]*Node{}, Sessions: map[int64]int32{}, ephemerals: map[int64]map[string]struct{}{}}
}

// isEphemeral is EphemeralType.get(owner) == VOID's complement for
// sessions: neither persistent, container nor TTL (high byte 0xff).
func isEphemeral(owner int64) bool {
	return owner != 0 && owner != containerOwner && owner>>56 != -1
}

func (dt *DataTree) track(path string, owner int64) {
	if !isEphemeral(owner) {
		return
	}
	s := dt.ephemerals[owner]
	if s == nil {
		s = map[string]struct{}{}
		dt.ephemerals[owner] = s
	}
	s[path] = struct{}{}
}

// add puts a node loaded from a snapshot; its parent must be there.
func (dt *DataTree) add(path string, n *Node) error {
	if _, dup := dt.Nodes[path]; dup {
		return fmt.Errorf("%w: duplicate node %q", ErrCorrupt, path)
	}
	if path != "" {
		i := strings.LastIndexByte(path, '/')
		if i < 0 {
			return fmt.Errorf("%w: bad path %q", ErrCorrupt, path)
		}
		parent := dt.Nodes[path[:i]]
		if parent == nil {
			return fmt.Errorf("%w: node %q without its parent", ErrCorrupt, path)
		}
		parent.children++
	}
	dt.Nodes[path] = n
	dt.track(path, n.Stat.EphemeralOwner)
	return nil
}

func split(path string) (parent, child string) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", path
	}
	return path[:i], path[i+1:]
}

// createNode is DataTree.createNode; false means NoNode or NodeExists.
func (dt *DataTree) createNode(path string, data []byte, acl []zkproto.ACL, owner int64, parentCVersion int32, zxid, time int64) bool {
	parentName, _ := split(path)
	parent := dt.Nodes[parentName]
	if parent == nil {
		return false
	}
	if acl == nil {
		acl = zkproto.OpenACLUnsafe
	}
	if existing := dt.Nodes[path]; existing != nil {
		existing.ACL = acl // as ZooKeeper does, for fuzzy snapshots
		return false
	}
	if parentCVersion == -1 {
		parentCVersion = parent.Stat.Cversion + 1
	}
	if parentCVersion > parent.Stat.Cversion {
		parent.Stat.Cversion = parentCVersion
		parent.Stat.Pzxid = zxid
	}
	parent.children++
	dt.Nodes[path] = &Node{Data: data, ACL: acl, Stat: Stat{Czxid: zxid, Mzxid: zxid, Pzxid: zxid,
		Ctime: time, Mtime: time, EphemeralOwner: owner}}
	dt.track(path, owner)
	return true
}

// deleteNode is DataTree.deleteNode: the parent's pzxid moves even when the
// child is already gone (fuzzy snapshots).
func (dt *DataTree) deleteNode(path string, zxid int64) {
	parentName, _ := split(path)
	parent := dt.Nodes[parentName]
	if parent == nil {
		return
	}
	n := dt.Nodes[path]
	if zxid > parent.Stat.Pzxid {
		parent.Stat.Pzxid = zxid
	}
	if n == nil {
		return
	}
	parent.children--
	delete(dt.Nodes, path)
	if s := dt.ephemerals[n.Stat.EphemeralOwner]; s != nil {
		delete(s, path)
	}
}

func (dt *DataTree) setData(path string, data []byte, version int32, zxid, time int64) {
	if n := dt.Nodes[path]; n != nil {
		n.Data, n.Stat.Mtime, n.Stat.Mzxid, n.Stat.Version = data, time, zxid, version
	}
}

func (dt *DataTree) setACL(path string, acl []zkproto.ACL, version int32) {
	if n := dt.Nodes[path]; n != nil {
		n.ACL, n.Stat.Aversion = acl, version
	}
}

// setCversionPzxid is DataTree.setCversionPzxid.
func (dt *DataTree) setCversionPzxid(path string, cversion int32, zxid int64) {
	n := dt.Nodes[strings.TrimSuffix(path, "/")]
	if n == nil {
		return
	}
	if cversion == -1 {
		cversion = n.Stat.Cversion + 1
	}
	if cversion > n.Stat.Cversion {
		n.Stat.Cversion, n.Stat.Pzxid = cversion, zxid
	}
}

// killSession deletes the session's ephemerals: the paths the txn lists,
// then any the tree still has for it.
func (dt *DataTree) killSession(session, zxid int64, paths []string) {
	for _, p := range paths {
		dt.deleteNode(p, zxid)
	}
	for p := range dt.ephemerals[session] {
		dt.deleteNode(p, zxid)
	}
	delete(dt.ephemerals, session)
}

// apply is FileTxnSnapLog.processTransaction + DataTree.processTxn: the
// sessions first, then the tree; NoNode and NodeExists are ignored.
func (dt *DataTree) apply(t *txn) {
	switch t.typ {
	case zkproto.OpCreateSession:
		dt.Sessions[t.hdr.clientID] = t.timeout
	case zkproto.OpCloseSession:
		delete(dt.Sessions, t.hdr.clientID)
	}
	dt.process(&t.hdr, t)
	if t.hdr.zxid > dt.LastZxid {
		dt.LastZxid = t.hdr.zxid
	}
}

func (dt *DataTree) process(h *txnHeader, t *txn) {
	switch t.typ {
	case zkproto.OpCreate, zkproto.OpCreate2:
		owner := int64(0)
		if t.ephemeral {
			owner = h.clientID
		}
		ok := dt.createNode(t.path, t.data, t.acl, owner, t.parentCVersion, h.zxid, h.time)
		if !ok && t.typ == zkproto.OpCreate {
			if _, exists := dt.Nodes[t.path]; exists {
				parent, _ := split(t.path)
				dt.setCversionPzxid(parent, t.parentCVersion, h.zxid)
			}
		}
	case zkproto.OpCreateTTL:
		dt.createNode(t.path, t.data, t.acl, -0x0100000000000000|t.ttl, t.parentCVersion, h.zxid, h.time)
	case zkproto.OpCreateContainer:
		dt.createNode(t.path, t.data, t.acl, containerOwner, t.parentCVersion, h.zxid, h.time)
	case zkproto.OpDelete, zkproto.OpDeleteContainer:
		dt.deleteNode(t.path, h.zxid)
	case zkproto.OpSetData, zkproto.OpReconfig:
		dt.setData(t.path, t.data, t.version, h.zxid, h.time)
	case zkproto.OpSetACL:
		dt.setACL(t.path, t.acl, t.version)
	case zkproto.OpCloseSession:
		dt.killSession(h.clientID, h.zxid, t.paths)
	case zkproto.OpMulti:
		for i := range t.multi {
			if t.multi[i].typ == zkproto.OpError {
				return // a failed multi changed nothing
			}
		}
		for i := range t.multi {
			dt.process(h, &t.multi[i])
		}
	}
}

// Tree converts dt into a znode.Tree at dt.LastZxid. The sessions have no
// owner: the first server a session writes through adopts it.
func (dt *DataTree) Tree(opts znode.Options) (*znode.Tree, error) {
	recs := make([]znode.Record, 0, len(dt.Nodes))
	for path, n := range dt.Nodes {
		if path == "" {
			path = "/"
		}
		s := &n.Stat
		recs = append(recs, znode.Record{Path: path, Data: n.Data, ACL: n.ACL,
			Czxid: s.Czxid, Mzxid: s.Mzxid, Pzxid: s.Pzxid, Ctime: s.Ctime, Mtime: s.Mtime,
			Owner: s.EphemeralOwner, Version: s.Version, Cversion: s.Cversion, Aversion: s.Aversion})
	}
	sessions := make([]znode.Session, 0, len(dt.Sessions))
	for id, to := range dt.Sessions {
		sessions = append(sessions, znode.Session{ID: id, Timeout: to})
	}
	return znode.Build(opts, dt.LastZxid, sessions, recs)
}
