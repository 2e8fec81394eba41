package quorum

import (
	"fmt"
	"time"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// trackRestoredSessions starts the expiry clock of every session found in
// the tree after a restart: a client that reconnects within its timeout
// keeps its session and its ephemerals.
func (s *Server) trackRestoredSessions() {
	now := time.Now()
	for id, timeout := range s.tree.Load().Sessions() {
		s.tracker.track(id, time.Duration(timeout)*time.Millisecond, now)
	}
}

// whileLeading calls tick(now, first) every interval while this server
// leads, until the server stops; first is true at the first tick of each
// term of leadership.
func (s *Server) whileLeading(interval time.Duration, tick func(now time.Time, first bool)) {
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
				continue
			}
			tick(now, !leading)
			leading = true
		}
	}
}

// expireSessions closes the sessions whose clients went quiet, until the
// server stops. Only the leader decides expiry.
func (s *Server) expireSessions() {
	// The closes proposed and not yet answered; one that was not proposed
	// after all (this server no longer led) is decided again later.
	pending := map[int64]<-chan proposeResult{}
	s.whileLeading(max(s.cfg.TickTime/4, 10*time.Millisecond), func(now time.Time, first bool) {
		if first {
			// Before any expiry: the sessions' clocks ran on other
			// servers until now, and the clients were reconnecting.
			s.log.Info("leading: every session gets a fresh lease of its timeout")
			s.tracker.lease(s.tree.Load().Sessions(), now)
			clear(pending)
			return
		}
		for id, res := range pending {
			select {
			case r := <-res:
				delete(pending, id)
				if r.err != nil {
					s.log.Debug("a session's expiry was not proposed or not applied; deciding again", "session", fmt.Sprintf("0x%x", id), "err", r.err)
					s.tracker.unmarkClosing(id)
				}
			default:
			}
		}
		for _, id := range s.tracker.expired(now) {
			s.log.Info("session expired", "session", fmt.Sprintf("0x%x", id))
			txn := znode.Txn{Time: now.UnixMilli(), Session: id, Ops: []znode.Op{{Type: zkproto.OpCloseSession}}}
			pending[id] = s.proposeLeading(txn.Append(nil))
		}
	})
}

// leaderProposer is a replicator that can propose a txn only while this
// server leads (raftReplicator).
type leaderProposer interface {
	ProposeLeading(data []byte) <-chan proposeResult
}

// proposeLeading proposes a txn that only the leader decides (a session's
// expiry). isLeader is the last leader raft reported: a leader that was
// stopped or cut off and has just come back still believes it leads until
// the raft loop steps the new term, and its expiry clocks ran while the
// clients renewed their sessions with the new leader. Its decision enters
// the log only if raft still has it lead when the loop takes it, and then
// commits only with a majority of its term, which a deposed leader no
// longer has (as a ZooKeeper leader's proposal needs its followers' acks
// in its epoch); a follower would forward it to the new leader, which
// would close a live session.
func (s *Server) proposeLeading(data []byte) <-chan proposeResult {
	if p, ok := s.repl.(leaderProposer); ok {
		return p.ProposeLeading(data)
	}
	return s.repl.ProposeAsync(data)
}

// reapContainers deletes empty containers and expired TTL nodes every
// znode.container.checkIntervalMs, as ZooKeeper's ContainerManager does;
// and, like it, only on the leader (the ContainerManager starts with
// leadership and stops with it): every server sees the same candidates in
// its copy of the tree, and one proposer is enough. A server that becomes
// leader takes over at its next check.
func (s *Server) reapContainers() {
	s.whileLeading(s.cfg.ContainerInterval, func(now time.Time, _ bool) {
		for _, path := range s.tree.Load().ReapCandidates(now.UnixMilli()) {
			s.log.Info(reapLogMessage, "path", path)
			txn := znode.Txn{Time: now.UnixMilli(), Super: true,
				Ops: []znode.Op{{Type: zkproto.OpDeleteContainer, Path: path, Version: -1}}}
			s.repl.ProposeAsync(txn.Append(nil))
		}
	})
}

// reapLogMessage is logged for every delete the reaper proposes (as
// ZooKeeper's "Attempting to delete candidate container").
const reapLogMessage = "deleting an empty container or an expired TTL node"
