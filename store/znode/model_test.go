package znode

import (
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/zkproto"
)

// model is a dumb map-based data tree: the reference the Tree is checked
// against. It counts the visible cversion directly (creates + deletes) and
// the sequence counter separately, instead of ZooKeeper's 2*c - n formula.
type model struct {
	nodes    map[string]*mnode
	sessions map[int64]bool
}

type mnode struct {
	data     []byte
	stat     zkproto.Stat
	creates  int32 // sequence counter
	children map[string]bool
	private  bool // ACL alice-only
}

func newModel() *model {
	m := &model{nodes: map[string]*mnode{}, sessions: map[int64]bool{}}
	m.nodes["/"] = &mnode{data: []byte{}, children: map[string]bool{"zookeeper": true}}
	m.nodes["/zookeeper"] = &mnode{data: []byte{}, children: map[string]bool{"quota": true, "config": true}}
	m.nodes["/zookeeper/quota"] = &mnode{data: []byte{}, children: map[string]bool{}}
	m.nodes["/zookeeper/config"] = &mnode{data: []byte{}, children: map[string]bool{}}
	for _, n := range m.nodes {
		n.stat.NumChildren = int32(len(n.children))
		n.stat.Cversion = -n.stat.NumChildren
	}
	m.nodes["/zookeeper/config"].stat.Aversion = -1
	return m
}

func (m *model) clone() *model {
	c := &model{nodes: map[string]*mnode{}, sessions: maps.Clone(m.sessions)}
	for p, n := range m.nodes {
		cp := *n
		cp.children = maps.Clone(n.children)
		c.nodes[p] = &cp
	}
	return c
}

func mparent(p string) (string, string) {
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/", p[1:]
	}
	return p[:i], p[i+1:]
}

func (m *model) allowed(n *mnode, auth bool) bool { return !n.private || auth }

// apply mirrors one op; auth says whether the txn carries alice's id.
func (m *model) apply(txn *Txn, op *Op, auth bool) (string, zkproto.Err) {
	if op.Type != zkproto.OpCreateSession && op.Type != zkproto.OpCloseSession && !m.sessions[txn.Session] {
		return "", zkproto.ErrSessionExpired
	}
	switch op.Type {
	case zkproto.OpCreateSession:
		m.sessions[txn.Session] = true
	case zkproto.OpCloseSession:
		delete(m.sessions, txn.Session)
		for _, p := range slices.Sorted(maps.Keys(m.nodes)) {
			if n := m.nodes[p]; n.stat.EphemeralOwner == txn.Session {
				m.remove(txn, p)
			}
		}
	case zkproto.OpCreate:
		return m.create(txn, op, auth)
	case zkproto.OpDelete:
		pp, _ := mparent(op.Path)
		parent, n := m.nodes[pp], m.nodes[op.Path]
		switch {
		case parent == nil:
			return "", zkproto.ErrNoNode
		case !m.allowed(parent, auth):
			return "", zkproto.ErrNoAuth
		case n == nil:
			return "", zkproto.ErrNoNode
		case op.Version != -1 && op.Version != n.stat.Version:
			return "", zkproto.ErrBadVersion
		case len(n.children) > 0:
			return "", zkproto.ErrNotEmpty
		}
		m.remove(txn, op.Path)
	case zkproto.OpSetData:
		n := m.nodes[op.Path]
		switch {
		case n == nil:
			return "", zkproto.ErrNoNode
		case !m.allowed(n, auth):
			return "", zkproto.ErrNoAuth
		case op.Version != -1 && op.Version != n.stat.Version:
			return "", zkproto.ErrBadVersion
		}
		n.data = op.Data
		n.stat.Version++
		n.stat.Mzxid, n.stat.Mtime, n.stat.DataLength = txn.Zxid, txn.Time, int32(len(op.Data))
	}
	return "", zkproto.ErrOK
}

func (m *model) create(txn *Txn, op *Op, auth bool) (string, zkproto.Err) {
	pp, _ := mparent(op.Path)
	parent := m.nodes[pp]
	switch {
	case parent == nil:
		return "", zkproto.ErrNoNode
	case !m.allowed(parent, auth):
		return "", zkproto.ErrNoAuth
	}
	path := op.Path
	if op.Mode.Sequential() {
		path += fmt.Sprintf("%010d", parent.creates)
	}
	switch {
	case m.nodes[path] != nil:
		return "", zkproto.ErrNodeExists
	case parent.stat.EphemeralOwner != 0:
		return "", zkproto.ErrNoChildrenForEphemerals
	}
	_, name := mparent(path)
	parent.children[name] = true
	parent.creates++
	parent.stat.Cversion++
	parent.stat.NumChildren++
	parent.stat.Pzxid = txn.Zxid
	n := &mnode{data: op.Data, children: map[string]bool{}, private: op.ACL[0].ID == aliceID}
	z, tm := txn.Zxid, txn.Time
	n.stat = zkproto.Stat{Czxid: z, Mzxid: z, Pzxid: z, Ctime: tm, Mtime: tm, DataLength: int32(len(op.Data))}
	if op.Mode.Ephemeral() {
		n.stat.EphemeralOwner = txn.Session
	}
	m.nodes[path] = n
	return path, zkproto.ErrOK
}

func (m *model) remove(txn *Txn, path string) {
	pp, name := mparent(path)
	parent := m.nodes[pp]
	delete(parent.children, name)
	parent.stat.Cversion++
	parent.stat.NumChildren--
	parent.stat.Pzxid = txn.Zxid
	delete(m.nodes, path)
}

func (m *model) applyTxn(txn *Txn, auth bool) []zkproto.Err {
	errs := make([]zkproto.Err, len(txn.Ops))
	if !txn.Multi {
		for i := range txn.Ops {
			_, errs[i] = m.apply(txn, &txn.Ops[i], auth)
		}
		return errs
	}
	c := m.clone()
	for i := range txn.Ops {
		if _, err := c.apply(txn, &txn.Ops[i], auth); err != zkproto.ErrOK {
			errs[i] = err
			for j := i + 1; j < len(errs); j++ {
				errs[j] = zkproto.ErrRuntimeInconsistency
			}
			return errs
		}
	}
	*m = *c
	return errs
}

func randomOp(rng *rand.Rand) Op {
	parts := []string{"a", "b", "c"}
	path := ""
	for d := rng.Intn(3) + 1; d > 0; d-- {
		path += "/" + parts[rng.Intn(len(parts))]
	}
	switch r := rng.Intn(30); {
	case r < 12:
		op := create(path, zkproto.CreateMode(rng.Intn(4)))
		op.Data = []byte(strings.Repeat("x", rng.Intn(5)))
		if rng.Intn(6) == 0 {
			op.ACL = aliceACL
		}
		return op
	case r < 20:
		if rng.Intn(2) == 0 {
			path += fmt.Sprintf("%010d", rng.Intn(3))
		}
		return del(path, int32(rng.Intn(3))-1)
	case r < 28:
		return setData(path, strings.Repeat("y", rng.Intn(4)), int32(rng.Intn(3))-1)
	case r < 29:
		return Op{Type: zkproto.OpCloseSession}
	}
	return Op{Type: zkproto.OpCreateSession, SessionTimeout: 5000}
}

func TestModel(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runModel(t, seed, 1000) })
	}
}

func runModel(t *testing.T, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	tree, m := New(Options{}), newModel()
	for i := 1; i <= steps; i++ {
		txn := Txn{Zxid: int64(i), Time: int64(i) * 10, Session: int64(1 + rng.Intn(2))}
		auth := rng.Intn(2) == 0
		if auth {
			txn.Auth = []zkproto.ID{aliceID}
		}
		txn.Ops = []Op{randomOp(rng)}
		if !m.sessions[txn.Session] && rng.Intn(5) != 0 {
			txn.Ops[0] = Op{Type: zkproto.OpCreateSession, SessionTimeout: 5000}
		} else if rng.Intn(5) == 0 {
			txn.Multi = true
			for n := rng.Intn(4); n > 0; n-- {
				if op := randomOp(rng); op.Type != zkproto.OpCloseSession && op.Type != zkproto.OpCreateSession {
					txn.Ops = append(txn.Ops, op)
				}
			}
			if txn.Ops[0].Type == zkproto.OpCloseSession || txn.Ops[0].Type == zkproto.OpCreateSession {
				txn.Ops = txn.Ops[1:]
			}
		}
		want := m.applyTxn(&txn, auth)
		got, _ := tree.Apply(txn)
		for j := range want {
			if got[j].Err != want[j] {
				t.Fatalf("step %d op %d %+v: got %v, want %v", i, j, txn.Ops[j], got[j].Err, want[j])
			}
		}
		compareModel(t, i, tree, m)
	}
}

func compareModel(t *testing.T, step int, tree *Tree, m *model) {
	t.Helper()
	if tree.NodeCount() != len(m.nodes) {
		t.Fatalf("step %d: %d nodes, model %d", step, tree.NodeCount(), len(m.nodes))
	}
	for p, n := range m.nodes {
		data, stat, err := tree.Get(p)
		if err != zkproto.ErrOK || stat != n.stat || string(data) != string(n.data) {
			t.Fatalf("step %d %s: %v %+v %q\nmodel %+v %q", step, p, err, stat, data, n.stat, n.data)
		}
		kids, _, _ := tree.Children(p)
		if want := slices.Sorted(maps.Keys(n.children)); !reflect.DeepEqual(kids, want) && len(want)+len(kids) > 0 {
			t.Fatalf("step %d %s: children %v, model %v", step, p, kids, want)
		}
	}
	for id := range int64(3) {
		var want []string
		for p, n := range m.nodes {
			if n.stat.EphemeralOwner == id && id != 0 {
				want = append(want, p)
			}
		}
		slices.Sort(want)
		if got := tree.Ephemerals(id, ""); !slices.Equal(got, want) {
			t.Fatalf("step %d: ephemerals of %d %v, model %v", step, id, got, want)
		}
		if tree.SessionExists(id) != m.sessions[id] {
			t.Fatalf("step %d: session %d", step, id)
		}
	}
	if n, _ := tree.AllChildrenNumber("/"); int(n) != len(m.nodes)-1 {
		t.Fatalf("step %d: AllChildrenNumber %d", step, n)
	}
}
