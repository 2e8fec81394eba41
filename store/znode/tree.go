package znode

import (
	"strconv"
	"sync"
	"unsafe"

	"github.com/google/btree"
	"github.com/zkafka/zkafka/zkproto"
)

// DefaultMaxDataBytes is ZooKeeper's jute.maxbuffer default.
const DefaultMaxDataBytes = 0xfffff

const btreeDegree = 32

// Options configure a Tree. Every server of an ensemble must use the same
// Options: Apply depends on them.
type Options struct {
	// MaxDataBytes caps the data of one znode; 0 means DefaultMaxDataBytes.
	MaxDataBytes int
	// ExtendedTypes allows TTL nodes (zookeeper.extendedTypesEnabled).
	ExtendedTypes bool
	// ContainerMaxNeverUsedMs makes a container that never had a child a
	// reap candidate once its mtime is older than this; 0 = never
	// (znode.container.maxNeverUsedIntervalMs).
	ContainerMaxNeverUsedMs int64
}

func (o Options) withDefaults() Options {
	if o.MaxDataBytes <= 0 {
		o.MaxDataBytes = DefaultMaxDataBytes
	}
	return o
}

// Tree is the in-memory data tree. Apply is called by one goroutine (the
// apply loop); reads may be called from any goroutine at the same time: a
// sync.RWMutex inside the Tree orders them.
type Tree struct {
	opts Options

	mu       sync.RWMutex
	nodes    *btree.BTreeG[*node]      // by key; see keyOf
	owners   *btree.BTreeG[ownerRef]   // Invariant: one entry per node whose owner != 0
	sessions *btree.BTreeG[sessionRec] // by id
	acls     [][]zkproto.ACL           // Invariant: append-only; index = node ACL index
	aclIdx   map[string]uint32         // writer-side index of acls; nil until first needed
	aclLast  uint32                    // the last index internACL returned
	lastZxid int64

	// recording is set while a multi is applied: every node change is
	// logged in undo so a failing op can roll the multi back.
	recording bool
	undo      []undoRec

	// warning is the quota warning of the op being applied (Result.Warning).
	warning string
}

// ownerRef indexes nodes by raw ephemeralOwner: a session's ephemerals,
// containers (math.MinInt64) and TTL nodes (0xff.. high byte).
type ownerRef struct {
	owner int64
	key   string
}

type sessionRec struct {
	id      int64
	timeout int32
	owner   int64 // the myid of the server that owns the session; 0 = none
}

type undoRec struct{ old, new *node }

func lessNode(a, b *node) bool { return a.key() < b.key() }

func lessOwner(a, b ownerRef) bool {
	if a.owner != b.owner {
		return a.owner < b.owner
	}
	return a.key < b.key
}

func lessSession(a, b sessionRec) bool { return a.id < b.id }

func newEmpty(opts Options) *Tree {
	return &Tree{
		opts:     opts.withDefaults(),
		nodes:    btree.NewG(btreeDegree, lessNode),
		owners:   btree.NewG(btreeDegree, lessOwner),
		sessions: btree.NewG(btreeDegree, lessSession),
	}
}

// New returns a tree as a fresh ZooKeeper 3.8 standalone server has it:
// "/", "/zookeeper", "/zookeeper/quota" and "/zookeeper/config", all with
// zero stats and empty (not null) data, open ACLs except /zookeeper/config,
// which is world:anyone read with aversion -1 (DataTree.addConfigNode).
func New(opts Options) *Tree {
	t := newEmpty(opts)
	t.acls = [][]zkproto.ACL{zkproto.OpenACLUnsafe, zkproto.ReadACLUnsafe}
	sys := []struct {
		path     string
		children int32
		acl      uint32
		aversion int32
	}{
		{"/", 1, aclOpen, 0},
		{"/zookeeper", 2, aclOpen, 0},
		{"/zookeeper/quota", 0, aclOpen, 0},
		{"/zookeeper/config", 0, aclRead, -1},
	}
	for _, s := range sys {
		n := &node{numChildren: s.children}
		key := keyOf(s.path)
		n.kd, n.klen = buildKD(key, []byte{}, s.acl, s.aversion), int32(len(key))
		t.nodes.ReplaceOrInsert(n)
	}
	return t
}

// Clone returns a copy of t that shares all its memory until either side
// writes (btree copy-on-write; nodes are never modified in place). The clone
// is meant to be read, e.g. serialized with WriteSnapshot, while t keeps
// applying writes. Cost: O(number of sessions) at most, usually O(1).
func (t *Tree) Clone() *Tree {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &Tree{
		opts:     t.opts,
		nodes:    t.nodes.Clone(),
		owners:   t.owners.Clone(),
		sessions: t.sessions.Clone(),
		acls:     t.acls[:len(t.acls):len(t.acls)],
		lastZxid: t.lastZxid,
	}
}

// probe is a pooled lookup key, so that reads do not allocate. Its node's kd
// aliases buf; the btree never keeps a probe.
type probe struct {
	n   node
	buf []byte
}

var probes = sync.Pool{New: func() any { return new(probe) }}

// probeKey returns a probe whose key is keyOf(path), with the root alias ""
// mapped to "/". ok is false for a path that has no '/' (never stored).
func probeKey(path string) (*probe, bool) {
	if path == "" {
		path = "/"
	}
	s := -1
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			s = i
			break
		}
	}
	if s < 0 {
		return nil, false
	}
	p := probes.Get().(*probe)
	p.buf = append(p.buf[:0], path...)
	p.buf[s] = 0
	p.set()
	return p, true
}

// probeRaw returns a probe for a stored key.
func probeRaw(key string) *probe {
	p := probes.Get().(*probe)
	p.n.kd, p.n.klen = key, int32(len(key))
	return p
}

// probePrefix returns a probe whose key is the smallest key of the children
// of path ("" or "/" for the root): path + "\x00", or path + sep.
func probePrefix(path string, sep byte) *probe {
	if path == "/" {
		path = ""
	}
	p := probes.Get().(*probe)
	p.buf = append(append(p.buf[:0], path...), sep)
	p.set()
	return p
}

func (p *probe) set() {
	p.n.kd = unsafe.String(unsafe.SliceData(p.buf), len(p.buf))
	p.n.klen = int32(len(p.buf))
}

func (p *probe) release() {
	p.n.kd = ""
	probes.Put(p)
}

// get returns the node at path, or nil. t.mu must be held.
func (t *Tree) get(path string) *node {
	p, ok := probeKey(path)
	if !ok {
		return nil
	}
	n, _ := t.nodes.Get(&p.n)
	p.release()
	return n
}

// getKey returns the node with key, or nil. t.mu must be held.
func (t *Tree) getKey(key string) *node {
	p := probeRaw(key)
	n, _ := t.nodes.Get(&p.n)
	p.release()
	return n
}

// scan calls fn for every node whose key starts with path+sep, in key order,
// until fn returns false. t.mu must be held.
func (t *Tree) scan(path string, sep byte, fn func(*node) bool) {
	p := probePrefix(path, sep)
	prefix := p.n.kd
	t.nodes.AscendGreaterOrEqual(&p.n, func(n *node) bool {
		k := n.key()
		if len(k) < len(prefix) || k[:len(prefix)] != prefix {
			return false
		}
		return fn(n)
	})
	p.release()
}

// replace puts n in place of old (nil: insert). t.mu must be held for writing.
func (t *Tree) replace(old, n *node) {
	t.nodes.ReplaceOrInsert(n)
	if old == nil && n.owner != 0 {
		t.owners.ReplaceOrInsert(ownerRef{n.owner, n.key()})
	}
	if t.recording {
		t.undo = append(t.undo, undoRec{old, n})
	}
}

// remove deletes old. t.mu must be held for writing.
func (t *Tree) remove(old *node) {
	t.nodes.Delete(old)
	if old.owner != 0 {
		t.owners.Delete(ownerRef{old.owner, old.key()})
	}
	if t.recording {
		t.undo = append(t.undo, undoRec{old, nil})
	}
}

// rollback undoes the changes logged since recording started.
func (t *Tree) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		r := t.undo[i]
		switch {
		case r.new == nil:
			t.nodes.ReplaceOrInsert(r.old)
			if r.old.owner != 0 {
				t.owners.ReplaceOrInsert(ownerRef{r.old.owner, r.old.key()})
			}
		case r.old == nil:
			t.nodes.Delete(r.new)
			if r.new.owner != 0 {
				t.owners.Delete(ownerRef{r.new.owner, r.new.key()})
			}
		default:
			t.nodes.ReplaceOrInsert(r.old)
		}
	}
	t.undo = t.undo[:0]
}

// SetConfigNode sets /zookeeper/config as an ensemble member does at start:
// the ensemble's configuration text, data version -1 and mtime the given
// time (ms), zxids 0. It is local state, not a txn: every member writes the
// same text from its own zoo.cfg.
func (t *Tree) SetConfigNode(data []byte, mtime int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.get("/zookeeper/config")
	if n == nil {
		return
	}
	c := n.withData(data)
	c.version = -1
	c.mtime = mtime
	t.replace(n, c)
}

// setConfig applies an OpSetConfig txn (see OpSetConfig).
func (t *Tree) setConfig(txn *Txn, op *Op) (zkproto.Stat, zkproto.Err) {
	if err := t.checkSession(txn); err != zkproto.ErrOK {
		return zkproto.Stat{}, err
	}
	n := t.get("/zookeeper/config")
	if n == nil {
		return zkproto.Stat{}, zkproto.ErrNoNode
	}
	data := append(append([]byte{}, op.Data...), "version="+strconv.FormatUint(uint64(txn.Zxid), 16)...)
	c := n.withData(data)
	c.version = -1
	c.mtime = txn.Time
	c.mzxid = txn.Zxid
	t.replace(n, c)
	return c.stat(t.opts.ExtendedTypes), zkproto.ErrOK
}

// ConfigChanged reports whether /zookeeper/config was set by a reconfig
// (OpSetConfig) rather than at start (SetConfigNode): its mzxid is not 0.
func (t *Tree) ConfigChanged() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := t.get("/zookeeper/config")
	return n != nil && n.mzxid != 0
}
