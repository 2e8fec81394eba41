package quorum

import (
	"context"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
)

// A server whose raft node stops on its own (a failed fsync or write of the
// log, a full disk, a snapshot that cannot be restored) cannot take writes
// and must not serve reads: its tree no longer follows the ensemble, and
// what raft believes durable may not be on disk. Like Apache ZooKeeper,
// which exits when its txn log cannot be written, it fail-stops: it logs
// the cause, closes its listener and every client connection (clients move
// on to another server, or see connection loss), and reports the cause on
// Failed so that the process exits non-zero. It is not restarted in place:
// only a restart, which recovers the log from disk, makes it whole again.

// failStopGrace bounds how long a fail-stop waits for the connections'
// goroutines before reporting the failure.
const failStopGrace = 10 * time.Second

// Failed returns a channel that yields, once, the error that stopped the
// server on its own (its replicated log failed). It yields nothing after a
// Shutdown. By the time it yields, the listener and every client
// connection are closed.
func (s *Server) Failed() <-chan error { return s.failed }

// watchNode fail-stops the server if node stops while the server runs. A
// tracked goroutine: it returns at Shutdown.
func (s *Server) watchNode(node *raftnode.Node) {
	select {
	case <-s.done:
		return
	case <-node.Done():
	}
	select {
	case <-s.done:
		return // Shutdown stopped the node
	default:
	}
	err := node.Err()
	if err == nil {
		err = raftnode.ErrStopped // stopped behind the server's back: fatal all the same
	}
	// Not tracked: Shutdown waits for the tracked goroutines, this one
	// among them.
	go s.failStop(err)
}

// failStop shuts the server down after a fatal error of its replicated log
// and reports err on Failed.
func (s *Server) failStop(err error) {
	s.log.Error("replicated log failed: closing every connection and stopping (fail-stop)", "err", err)
	for _, c := range s.connections() {
		c.close("the server's log failed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), failStopGrace)
	defer cancel()
	if serr := s.Shutdown(ctx); serr != nil && serr != err {
		s.log.Debug("shutdown after a log failure", "err", serr)
	}
	s.failed <- err
}
