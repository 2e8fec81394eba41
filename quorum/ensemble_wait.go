package quorum

import (
	"context"
	"sync"
	"time"
)

// Two waits spare a client that the loss of a leader moved to this server
// a refusal (after which go-zookeeper, once it has tried every server,
// sleeps a second, and the Java client backs off):
//
// A server that has just lost its leader is in an election that usually
// ends within milliseconds (a dead leader is replaced at once: raftnode's
// PeerGone). A client that connects meanwhile, typically one that the
// loss of the leader just disconnected from another server, waits for
// the election's outcome rather than being refused at once. The wait lasts
// at most what is left of servingGrace since the leader was lost; a server
// that has been without a leader for longer refuses at once, as before.

// leaderWait lets handshakes wait for a leader. Its methods are safe for
// concurrent use.
type leaderWait struct {
	mu     sync.Mutex
	known  bool          // a leader is known
	lostAt time.Time     // when the last leader was lost (zero: never had one)
	back   chan struct{} // closed when a leader is known again; nil if nobody waits
}

// changed records the leader of the moment (0: none), at now; on the raft
// loop: quick.
func (w *leaderWait) changed(leader uint64, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case leader != 0:
		w.known = true
		if w.back != nil {
			close(w.back)
			w.back = nil
		}
	case w.known:
		w.known, w.lostAt = false, now
	}
}

// wait waits until a leader is known, at most until grace after the last
// leader was lost (now is the time of the call), or until done closes; it
// reports whether one is known.
func (w *leaderWait) wait(now time.Time, grace time.Duration, done <-chan struct{}) bool {
	w.mu.Lock()
	if w.known {
		w.mu.Unlock()
		return true
	}
	left := grace - now.Sub(w.lostAt)
	if w.lostAt.IsZero() || left <= 0 {
		w.mu.Unlock()
		return false
	}
	if w.back == nil {
		w.back = make(chan struct{})
	}
	back := w.back
	w.mu.Unlock()
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-back:
		return true
	case <-t.C:
	case <-done:
	}
	return false
}

// awaitLeader waits (ensemble only) for the outcome of an election that
// began less than servingGrace ago; it reports whether the server now
// knows a leader.
func (s *Server) awaitLeader() bool {
	if s.ens == nil {
		return true
	}
	return s.ens.led.wait(time.Now(), servingGraceTicks*s.ens.tick, s.done) && s.serving()
}

// A client may have seen, through another server, a zxid this one has not
// applied yet: a write the old leader committed, and which the new one is
// replicating here. ZooKeeper refuses such a client at once; an ensemble
// member first catches up (a ReadIndex barrier, which also waits for a
// leader) for at most servingGrace.

// catchUp waits until the server has applied zxid, at most servingGrace;
// it reports whether it has. A standalone server has nothing to wait for.
func (s *Server) catchUp(zxid int64) bool {
	if s.ens == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), servingGraceTicks*s.ens.tick)
	defer cancel()
	if s.repl.ReadIndex(ctx) != nil {
		return false
	}
	return s.tree.Load().LastZxid() >= zxid
}
