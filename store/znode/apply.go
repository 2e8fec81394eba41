package znode

import (
	"github.com/zkafka/zkafka/zkproto"
)

// Txn is one replicated write: the request of one client (or of the server
// itself: Session 0) as it was committed, with the zxid and time the log
// gave it. Apply validates and applies it deterministically.
type Txn struct {
	Zxid int64
	// Time is ms since the epoch on the clock of the server that took the
	// request and proposed it (a follower's for writes that came through
	// it; ZooKeeper's leader stamps every txn with its own clock instead).
	// Every server applies the same value, so ctime and mtime agree across
	// the ensemble; between servers whose clocks differ they need not grow
	// with the zxid.
	Time    int64
	Session int64 // 0 = the server itself (container reaper): no session check
	// Auth holds the session's identities (its "ip" id and the digest ids it
	// added), for ACL checks and the "auth" scheme.
	Auth  []zkproto.ID
	Super bool
	Ops   []Op
	// Multi applies Ops atomically (ZooKeeper's multi). Otherwise each op is
	// applied on its own, in order (normally there is exactly one).
	Multi bool
	// Owner is the server the write came through (its myid), or 0: no
	// owner (a standalone server, or the server itself). A session belongs
	// to the server that created or last revalidated it; a write of the
	// session through another server fails with SessionMoved, as
	// SessionTracker.checkSession fails it on ZooKeeper's leader.
	Owner int64
	// EnforceQuota makes creates and setData that would go over a hard
	// quota fail with QuotaExceeded (zookeeper.enforceQuota on the server
	// that took the request).
	EnforceQuota bool
	// SASLScheme: the server that took the request has the sasl
	// authentication provider (authProvider.N = SASLAuthenticationProvider),
	// so sasl ids are valid in ACLs and "auth" takes the session's sasl ids,
	// as PrepRequestProcessor.fixupACL with that provider registered.
	SASLScheme bool
}

// OpRevalidateSession is the txn of a session that reattached to a server
// of an ensemble (ZooKeeper's Learner.validateSession, which the leader
// answers by touching the session and making that server its owner): it
// makes Txn.Owner the owner of Txn.Session, and fails with SessionExpired
// when the session is not open. SessionTimeout is the renegotiated
// timeout; the tree keeps the one the session was created with. It is
// never a client opcode.
const OpRevalidateSession zkproto.OpCode = -100

// OpSetConfig is the txn of a reconfig (ZooKeeper's SetDataTxn of
// /zookeeper/config with version -1): Data is the new server.N lines,
// each ending in a newline, and /zookeeper/config becomes Data followed
// by "version=" and the txn's zxid in hex, with mzxid the zxid, mtime the
// txn's time and data version -1. It is never a client opcode: the server
// builds it from a checked reconfig request.
const OpSetConfig zkproto.OpCode = -101

// Op is one write. Which fields matter depends on Type:
//
//	OpCreate, OpCreate2, OpCreateContainer: Path Data ACL Mode
//	OpCreateTTL:                            Path Data ACL Mode TTL
//	OpDelete, OpSetData, OpCheck:           Path Version (+ Data for OpSetData)
//	OpDeleteContainer:                      Path
//	OpSetACL:                               Path ACL Version (the expected aversion)
//	OpCreateSession:                        SessionTimeout (the session is Txn.Session)
//	OpCloseSession:                         (the session is Txn.Session)
//	OpRevalidateSession:                    SessionTimeout (the session is Txn.Session, the owner Txn.Owner)
//	OpSetConfig:                            Data (the server.N lines)
type Op struct {
	Type           zkproto.OpCode
	Path           string
	Data           []byte // nil = null data
	ACL            []zkproto.ACL
	Mode           zkproto.CreateMode
	TTL            int64
	Version        int32 // -1 = any
	SessionTimeout int32
}

// Result is the outcome of one op. In a failed multi every result has Type
// OpError: ErrOK before the failing op, its error, then
// ErrRuntimeInconsistency. A multi that ZooKeeper could not even decode
// (an op type not allowed in a multi, or a TTL mode that does not match the
// op type) yields the single result {Type: OpMulti, Err: ErrMarshallingError},
// which belongs in the reply header.
type Result struct {
	Type zkproto.OpCode // in a multi, create2 reports as OpCreate (path only)
	Err  zkproto.Err
	Path string       // the created path (with its sequence suffix)
	Stat zkproto.Stat // creates, setData, setACL
	// Warning is ZooKeeper's "Quota exceeded: ..." log line when the op
	// went over a quota (creates and setData), for the server that
	// answers the client to log.
	Warning string
}

// Event is a watch event a write caused. NodeDeleted is for both the data
// and the child watches of Path (DataTree.deleteNode); NodeChildrenChanged
// is for the parent. ACL is the ACL of the node the event is about (the
// parent's for NodeChildrenChanged): ZooKeeper 3.8 delivers an event only to
// watchers with READ permission on it (ServerCnxn.process with the znode's
// ACL). The slice is shared and must not be modified.
type Event struct {
	Type zkproto.EventType
	Path string
	ACL  []zkproto.ACL
}

// Apply validates and applies txn. It always advances LastZxid to txn.Zxid,
// even when every op fails (a failed write takes a zxid in ZooKeeper). It
// returns one result per op and the events of what changed, in order.
func (t *Tree) Apply(txn Txn) ([]Result, []Event) {
	return t.ApplyAppend(make([]Result, 0, len(txn.Ops)), nil, txn)
}

// ApplyAppend is Apply appending the results and the events to results and
// events, so that a caller that applies txn after txn can reuse buffers
// rather than allocate two per txn.
func (t *Tree) ApplyAppend(results []Result, events []Event, txn Txn) ([]Result, []Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastZxid = txn.Zxid
	if txn.Multi {
		r, ev := t.applyMulti(&txn)
		return append(results, r...), append(events, ev...)
	}
	for i := range txn.Ops {
		results = append(results, t.applyOp(&txn, &txn.Ops[i], txn.Ops[i].Type, &events))
	}
	return results, events
}

// multiType maps an op type as MultiOperationRecord does: creates take their
// type from the mode (create2 becomes create). ok is false for what ZooKeeper
// fails with a marshalling error.
func multiType(op *Op) (zkproto.OpCode, bool) {
	switch op.Type {
	case zkproto.OpCreate, zkproto.OpCreate2, zkproto.OpCreateContainer:
		if op.Mode.TTL() {
			return 0, false
		}
		if op.Mode == zkproto.ModeContainer {
			return zkproto.OpCreateContainer, true
		}
		return zkproto.OpCreate, true
	case zkproto.OpCreateTTL:
		return zkproto.OpCreateTTL, op.Mode.TTL()
	case zkproto.OpDelete, zkproto.OpSetData, zkproto.OpCheck:
		return op.Type, true
	}
	return 0, false
}

func (t *Tree) applyMulti(txn *Txn) ([]Result, []Event) {
	types := make([]zkproto.OpCode, len(txn.Ops))
	for i := range txn.Ops {
		typ, ok := multiType(&txn.Ops[i])
		if !ok {
			return []Result{{Type: zkproto.OpMulti, Err: zkproto.ErrMarshallingError}}, nil
		}
		types[i] = typ
	}
	results := make([]Result, len(txn.Ops))
	var events []Event
	t.recording = true
	defer func() {
		t.recording = false
		clear(t.undo)
		t.undo = t.undo[:0]
	}()
	for i := range txn.Ops {
		results[i] = t.applyOp(txn, &txn.Ops[i], types[i], &events)
		if results[i].Err != zkproto.ErrOK {
			t.rollback()
			return failedMulti(len(txn.Ops), i, results[i].Err), nil
		}
	}
	return results, events
}

func failedMulti(n, failed int, err zkproto.Err) []Result {
	out := make([]Result, n)
	for i := range out {
		out[i].Type = zkproto.OpError
		switch {
		case i == failed:
			out[i].Err = err
		case i > failed:
			out[i].Err = zkproto.ErrRuntimeInconsistency
		}
	}
	return out
}

func (t *Tree) applyOp(txn *Txn, op *Op, typ zkproto.OpCode, ev *[]Event) (r Result) {
	r.Type = typ
	defer func() { r.Warning, t.warning = t.warning, "" }()
	switch typ {
	case zkproto.OpCreate, zkproto.OpCreate2, zkproto.OpCreateContainer, zkproto.OpCreateTTL:
		r.Path, r.Stat, r.Err = t.create(txn, op, typ, ev)
	case zkproto.OpDelete:
		r.Err = t.delete(txn, op, ev)
	case zkproto.OpDeleteContainer:
		r.Err = t.deleteContainer(txn, op, ev)
	case zkproto.OpSetData:
		r.Stat, r.Err = t.setData(txn, op, ev)
	case zkproto.OpSetACL:
		r.Stat, r.Err = t.setACL(txn, op)
	case zkproto.OpCheck:
		r.Err = t.check(txn, op)
	case zkproto.OpCreateSession:
		r.Err = t.createSession(txn, op)
	case zkproto.OpCloseSession:
		t.closeSession(txn, ev)
	case OpRevalidateSession:
		r.Err = t.revalidateSession(txn)
	case OpSetConfig:
		r.Stat, r.Err = t.setConfig(txn, op)
	default:
		r.Err = zkproto.ErrUnimplemented
	}
	return r
}
