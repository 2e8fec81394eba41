package quorum

import (
	"fmt"
	"io"
	"time"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// Apply is the replicated state machine's step, called by the raft loop in
// log order on every server: it applies one txn to the tree, updates the
// session tracker, fires this server's watches and returns the results for
// the connection that proposed it. The zxid of the txn is its raft index.
func (s *Server) Apply(index uint64, data []byte) any {
	txn, err := znode.DecodeTxn(data)
	if err != nil {
		s.log.Error("undecodable log entry skipped", "index", index, "err", err)
		return &appliedTxn{zxid: int64(index)}
	}
	txn.Zxid = int64(index)
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	results, events := s.tree.Load().Apply(txn)
	s.afterApply(&txn, results)
	s.observeApplied(len(data), &txn, results, events)
	for _, ev := range events {
		s.watches.trigger(ev.Type, ev.Path, ev.ACL, txn.Zxid)
	}
	return &appliedTxn{zxid: txn.Zxid, results: results}
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
		case zkproto.OpCloseSession:
			s.tracker.forget(txn.Session)
			if c := s.connOf(txn.Session); c != nil && !c.closingSession.Load() {
				c.close("session expired")
			}
		}
	}
}

// Snapshot returns a writer of the current tree, cloned copy-on-write so
// that writes go on while it is serialized.
func (s *Server) Snapshot() func(w io.Writer) error {
	clone := s.tree.Load().Clone()
	return clone.WriteSnapshot
}

// Restore replaces the tree with a snapshot's.
func (s *Server) Restore(r io.Reader) error {
	t, err := znode.ReadSnapshot(r, s.treeOptions())
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	s.setConfigNode(t)
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

// trackRestoredSessions starts the expiry clock of every session found in
// the tree after a restart: a client that reconnects within its timeout
// keeps its session and its ephemerals.
func (s *Server) trackRestoredSessions() {
	now := time.Now()
	for id, timeout := range s.tree.Load().Sessions() {
		s.tracker.track(id, time.Duration(timeout)*time.Millisecond, now)
	}
}

// expireSessions closes the sessions whose clients went quiet, until the
// server stops. Only the server that decides expiry runs it.
func (s *Server) expireSessions() {
	interval := max(s.cfg.TickTime/4, 10*time.Millisecond)
	t := time.NewTicker(interval)
	defer t.Stop()
	leading := false
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			if !s.isLeader() {
				leading = false
				continue // only the leader decides expiry
			}
			if !leading {
				// Before any expiry: the sessions' clocks ran on other
				// servers until now, and the clients were reconnecting.
				leading = true
				s.log.Info("leading: every session gets a fresh lease of its timeout")
				s.tracker.lease(s.tree.Load().Sessions(), now)
				continue
			}
			for _, id := range s.tracker.expired(now) {
				s.log.Info("session expired", "session", fmt.Sprintf("0x%x", id))
				txn := znode.Txn{Time: now.UnixMilli(), Session: id, Ops: []znode.Op{{Type: zkproto.OpCloseSession}}}
				s.repl.ProposeAsync(txn.Append(nil))
			}
		}
	}
}

// reapContainers deletes empty containers and expired TTL nodes every
// znode.container.checkIntervalMs, as ZooKeeper's ContainerManager does;
// and, like it, only on the leader (the ContainerManager starts with
// leadership and stops with it): every server sees the same candidates in
// its copy of the tree, and one proposer is enough. A server that becomes
// leader takes over at its next check.
func (s *Server) reapContainers() {
	t := time.NewTicker(s.cfg.ContainerInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			if !s.isLeader() {
				continue // followers and observers leave it to the leader
			}
			for _, path := range s.tree.Load().ReapCandidates(now.UnixMilli()) {
				s.log.Info(reapLogMessage, "path", path)
				txn := znode.Txn{Time: now.UnixMilli(), Super: true,
					Ops: []znode.Op{{Type: zkproto.OpDeleteContainer, Path: path, Version: -1}}}
				s.repl.ProposeAsync(txn.Append(nil))
			}
		}
	}
}

// reapLogMessage is logged for every delete the reaper proposes (as
// ZooKeeper's "Attempting to delete candidate container").
const reapLogMessage = "deleting an empty container or an expired TTL node"
