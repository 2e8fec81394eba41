package quorum

import (
	"context"
	"errors"
	"net"
	"slices"
	"syscall"
	"time"
)

// When the last working connection a peer dialed to us closes, or ours to
// it, the transport checks whether the peer's process is gone, so that raft can replace a
// dead leader at once (raftnode's PeerGone) instead of after an election
// timeout, as a ZooKeeper follower starts its election when its socket to
// the leader closes. The proof is that a fresh dial to the peer's port is
// refused (ECONNREFUSED: nothing listens there any more). Every other
// outcome is no proof and changes nothing, raft's timeouts decide as ever:
//
//   - a stopped (SIGSTOP) or overloaded process: its kernel still
//     completes the handshake, the dial succeeds;
//   - a peer that only redialed (its sender reconnects, a proxy cut the
//     connection): the dial succeeds;
//   - a partition or a host that is down: the dial times out.
//
// A killed process's kernel may close a connection some milliseconds
// before the listener, so a dial that succeeds, or that the closing
// listener resets before it returns (ECONNRESET), is tried again,
// goneProbes times in all, goneProbeGap apart. Raft is told only once no
// connection of the peer that delivered frames is still open: its last
// messages, which raftnode steps before acting on the proof, must have
// reached it (stepped after it, a stale heartbeat of a dead leader would
// renew its lease on this follower).
const (
	goneProbes       = 10
	goneProbeGap     = 5 * time.Millisecond
	goneProbeTimeout = 500 * time.Millisecond
)

// peerClosed runs when the last connection of peer id that delivered
// frames closed, or our sender's connection to it: it probes the peer
// (once at a time per peer) and tells raft if its process is gone.
func (t *peerTransport) peerClosed(id uint64) {
	t.mu.Lock()
	if t.mu.closed || t.mu.probing[id] {
		t.mu.Unlock()
		return
	}
	if t.mu.probing == nil {
		t.mu.probing = map[uint64]bool{}
	}
	t.mu.probing[id] = true
	t.mu.Unlock()
	if !t.goroutines.Go("zk-peer-probe", func() {
		gone, dials, err := t.probeGone(id)
		t.mu.Lock()
		delete(t.mu.probing, id)
		reading := t.delivering(id)
		t.mu.Unlock()
		switch {
		case !gone:
			t.log.Debug("a peer's last connection closed; its port still answers or does not refuse", "peer", id, "dials", dials, "err", err)
			return
		case reading:
			// Its last frames may not have reached raft yet: the close
			// of that connection probes again.
			t.log.Debug("a peer's port refuses connections; a connection of it is still being read", "peer", id)
			return
		}
		t.log.Info("peer's process is gone (its connection closed, its port refuses connections)", "peer", id)
		t.node.PeerGone(id, t.connectedPeers())
	}) {
		t.mu.Lock()
		delete(t.mu.probing, id)
		t.mu.Unlock()
	}
}

// probeGone reports whether a dial to peer id's port is refused, with the
// dials made and the last one's error.
func (t *peerTransport) probeGone(id uint64) (gone bool, dials int, err error) {
	addr, ok := t.set.Load().addrs[id]
	if !ok {
		return false, 0, nil
	}
	for i := range goneProbes {
		if i > 0 {
			select {
			case <-t.stop:
				return false, i, nil
			case <-time.After(goneProbeGap):
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), goneProbeTimeout)
		var nc net.Conn
		nc, err = t.dial(ctx, "tcp", addr)
		cancel()
		switch {
		case err == nil:
			nc.Close()
		case errors.Is(err, syscall.ECONNRESET):
			// The handshake completed, then the connection was reset
			// before the dial returned: a listener that is closing.
		case errors.Is(err, syscall.ECONNREFUSED):
			return true, i + 1, err
		default:
			return false, i + 1, err // no answer: not a proof
		}
	}
	return false, goneProbes, err
}

// delivering reports whether peer id has an established connection that
// delivered frames (its reader may still hand some to raft). t.mu is held.
func (t *peerTransport) delivering(id uint64) bool {
	return slices.ContainsFunc(t.mu.byPeer[id], func(in *inboundPeer) bool { return in.delivered.Load() })
}

// connectedPeers lists the peers with an established connection to us.
func (t *peerTransport) connectedPeers() []uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]uint64, 0, len(t.mu.byPeer))
	for id := range t.mu.byPeer {
		ids = append(ids, id)
	}
	return ids
}
