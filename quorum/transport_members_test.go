package quorum

import (
	"testing"
	"time"
)

// TestPeerSetLearnsMembers: after setPeers, a server that joined the
// configuration is admitted and sent to, and one that left is refused and
// loses its connections (the transport of a reconfig).
func TestPeerSetLearnsMembers(t *testing.T) {
	p := startTestPeers(t, newPeerLimits(0xfffff, 0))
	nc := p.dial(t, append(peerHello(4), raftFrame(t, heartbeat(4))...))
	closedByServer(t, nc, 10*time.Second) // 4 is not a member yet

	p.t.setPeers(map[uint64]string{1: p.addr, 2: "127.0.0.1:1", 4: "127.0.0.1:1"})
	nc4 := p.dial(t, append(peerHello(4), raftFrame(t, heartbeat(4))...))
	p.waitStepped(t, 4)
	stillOpen(t, nc4)
	if p.t.set.Load().senders[4] == nil || p.t.set.Load().senders[3] != nil {
		t.Fatalf("senders after the change: %v", p.t.set.Load().senders)
	}
	nc3 := p.dial(t, append(peerHello(3), raftFrame(t, heartbeat(3))...))
	closedByServer(t, nc3, 10*time.Second) // 3 left

	p.t.setPeers(map[uint64]string{1: p.addr, 2: "127.0.0.1:1"})
	closedByServer(t, nc4, 10*time.Second) // 4 left: its connection goes
}
