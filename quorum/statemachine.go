package quorum

import (
	"fmt"
	"io"
	"time"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// stateMachine is the Server as raftnode.StateMachine: the raft loop's
// view of it, kept off the Server's exported surface.
type stateMachine struct{ s *Server }

func (m stateMachine) Apply(index uint64, data []byte) any { return m.s.apply(index, data) }
func (m stateMachine) Snapshot() func(w io.Writer) error   { return m.s.snapshot() }
func (m stateMachine) Restore(r io.Reader) error           { return m.s.restore(r) }

// apply is the replicated state machine's step, called by the raft loop in
// log order on every server: it applies one txn to the tree, updates the
// session tracker, fires this server's watches and returns the results for
// the connection that proposed it. The zxid of the txn is its raft index.
func (s *Server) apply(index uint64, data []byte) any {
	txn, err := znode.DecodeTxn(data)
	if err != nil {
		s.log.Error("undecodable log entry skipped", "index", index, "err", err)
		return &appliedTxn{zxid: int64(index)}
	}
	txn.Zxid = int64(index)
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	a := &appliedTxn{zxid: txn.Zxid}
	results, events := s.tree.Load().ApplyAppend(a.one[:0], s.events[:0], txn)
	a.results = results
	s.afterApply(&txn, results)
	s.logQuotaWarnings(&txn, results)
	s.observeApplied(len(data), &txn, results, events)
	for _, ev := range events {
		s.watches.trigger(ev.Type, ev.Path, ev.ACL, txn.Zxid)
	}
	clear(events) // keep no paths or ACLs alive in the scratch buffer
	s.events = events[:0]
	return a
}

// afterApply keeps the session tracker and the connections in step with the
// session txns.
func (s *Server) afterApply(txn *znode.Txn, results []znode.Result) {
	for i, op := range txn.Ops {
		if i >= len(results) || results[i].Err != zkproto.ErrOK {
			continue
		}
		switch op.Type {
		case zkproto.OpCreateSession:
			s.tracker.track(txn.Session, time.Duration(op.SessionTimeout)*time.Millisecond, time.Now())
		case znode.OpRevalidateSession:
			// As ZooKeeper's leader touches a session it revalidates.
			if s.tracker.touch(txn.Session, time.Now()) && op.SessionTimeout > 0 {
				s.tracker.setTimeout(txn.Session, time.Duration(op.SessionTimeout)*time.Millisecond)
			}
		case znode.OpSetConfig:
			s.adoptConfig(s.tree.Load())
		case zkproto.OpCloseSession:
			s.tracker.forget(txn.Session)
			if c := s.connOf(txn.Session); c != nil && !c.closingSession.Load() {
				c.close("session expired")
			}
		}
	}
}

// snapshot returns a writer of the current tree, cloned copy-on-write so
// that writes go on while it is serialized.
func (s *Server) snapshot() func(w io.Writer) error {
	clone := s.tree.Load().Clone()
	return clone.WriteSnapshot
}

// restore replaces the tree with a snapshot's.
func (s *Server) restore(r io.Reader) error {
	t, err := znode.ReadSnapshot(r, s.treeOptions())
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	if t.ConfigChanged() {
		s.adoptConfig(t) // a reconfig's configuration, not zoo.cfg's
	} else {
		s.setConfigNode(t)
	}
	s.tree.Store(t)
	return nil
}

// setConfigNode writes /zookeeper/config of an ensemble member into t.
func (s *Server) setConfigNode(t *znode.Tree) {
	if len(s.cfg.Servers) > 0 {
		t.SetConfigNode([]byte(s.cfg.DynamicConfigText()), s.started.UnixMilli())
	}
}

func (s *Server) treeOptions() znode.Options {
	return znode.Options{MaxDataBytes: s.cfg.JuteMaxBuffer, ExtendedTypes: s.cfg.ExtendedTypes}
}
