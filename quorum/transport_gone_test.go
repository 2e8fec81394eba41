package quorum

import (
	"context"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goneTestPeers is server 1's transport where peer 2's port is a listener
// that never accepts (a stopped process: its kernel still completes the
// handshake) and peer 3's port refuses connections (its process is gone).
func goneTestPeers(t *testing.T) *testPeers {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopped.Close() })
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused.Close()
	logs := &peerLogSink{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	addrs := map[uint64]string{1: l.Addr().String(), 2: stopped.Addr().String(), 3: refused.Addr().String()}
	tr := newPeerTransport(1, addrs, newPeerLimits(0, 0), log)
	node := newFakePeerNode()
	tr.node = node
	tr.start(l)
	t.Cleanup(tr.close)
	return &testPeers{t: tr, node: node, addr: l.Addr().String(), logs: logs}
}

// When a peer's last connection closes and its port refuses connections,
// raft is told its process is gone, with the peers still connected.
func TestPeerGoneWhenItsPortRefuses(t *testing.T) {
	p := goneTestPeers(t)
	two := p.dial(t, append(peerHello(2), raftFrame(t, heartbeat(2))...))
	p.waitStepped(t, 2)
	three := p.dial(t, append(peerHello(3), raftFrame(t, heartbeat(3))...))
	p.waitStepped(t, 3)
	three.Close()
	select {
	case g := <-p.node.gone:
		if g.id != 3 || !slices.Equal(g.connected, []uint64{2}) {
			t.Fatalf("PeerGone(%d, %v), want PeerGone(3, [2])", g.id, g.connected)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no PeerGone within 10s of the connection's close")
	}
	stillOpen(t, two)
}

// The connection our sender dialed to a peer closing, then its port
// refusing, is the same proof (here peer 4 never dials us).
func TestPeerGoneWhenOurConnectionToItCloses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	four, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer four.Close()
	logs := &peerLogSink{}
	addrs := map[uint64]string{1: l.Addr().String(), 4: four.Addr().String()}
	tr := newPeerTransport(1, addrs, newPeerLimits(0, 0), slog.New(slog.NewTextHandler(logs, nil)))
	node := newFakePeerNode()
	tr.node = node
	tr.start(l)
	t.Cleanup(tr.close)
	nc, err := four.Accept() // our sender's connection
	if err != nil {
		t.Fatal(err)
	}
	four.Close()
	nc.Close()
	select {
	case g := <-node.gone:
		if g.id != 4 {
			t.Fatalf("PeerGone(%d, %v), want peer 4", g.id, g.connected)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no PeerGone within 10s of our connection's close")
	}
}

// A peer whose connection closes but whose port still completes the
// handshake (a stopped or slow process, or one that only redials) is not
// gone; nor is one whose connection closed before it delivered anything.
func TestPeerNotGoneWhileItsPortAnswers(t *testing.T) {
	p := goneTestPeers(t)
	two := p.dial(t, append(peerHello(2), raftFrame(t, heartbeat(2))...))
	p.waitStepped(t, 2)
	two.Close()
	peerWaitFor(t, func() bool { return strings.Contains(p.logs.String(), "its port still answers") })
	three := p.dial(t, peerHello(3))
	peerWaitFor(t, func() bool { return p.t.connectedTo(3) })
	three.Close()
	peerWaitFor(t, func() bool { return !p.t.connectedTo(3) })
	// The only PeerGone could come from peer 3's close: a probe would log
	// and report within its bounded dials; peer 2's is done.
	time.Sleep(200 * time.Millisecond)
	select {
	case g := <-p.node.gone:
		t.Fatalf("PeerGone(%d, %v) for a peer that is not gone", g.id, g.connected)
	default:
	}
}

// A dial that the peer's closing listener resets before it returns
// (ECONNRESET: the handshake completed, then the kill reached the
// listener) is no answer either way: the probe dials again, and the next
// dial's refusal is the proof.
func TestPeerGoneProbeDialsAgainAfterAReset(t *testing.T) {
	tr := newPeerTransport(1, map[uint64]string{1: "127.0.0.1:1", 3: "127.0.0.1:3"}, newPeerLimits(0, 0), slog.New(slog.DiscardHandler))
	var dials int
	tr.dial = func(context.Context, string, string) (net.Conn, error) {
		dials++
		if dials == 1 {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNRESET)}
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	if gone, n, err := tr.probeGone(3); !gone || n != 2 {
		t.Fatalf("probeGone after a reset then a refusal: gone %v after %d dials (%v), want gone after 2", gone, n, err)
	}
}

// Raft is told only once the peer's connections that delivered frames are
// read to their end: our sender's connection to it may close, and its
// port refuse, while its last messages are still on their way to raft.
func TestPeerGoneAfterItsConnectionsAreRead(t *testing.T) {
	p := goneTestPeers(t)
	three := p.dial(t, append(peerHello(3), raftFrame(t, heartbeat(3))...))
	p.waitStepped(t, 3)
	p.t.peerClosed(3) // as when our sender's connection to it closes first
	deadline := time.After(10 * time.Second)
	for !strings.Contains(p.logs.String(), "still being read") {
		select {
		case g := <-p.node.gone:
			t.Fatalf("PeerGone(%d, %v) while a connection of it is open", g.id, g.connected)
		case <-deadline:
			t.Fatal("the probe did not end within 10s")
		case <-time.After(2 * time.Millisecond):
		}
	}
	three.Close()
	select {
	case g := <-p.node.gone:
		if g.id != 3 {
			t.Fatalf("PeerGone(%d, %v), want peer 3", g.id, g.connected)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no PeerGone within 10s of the last connection's close")
	}
}

// connectedTo reports whether peer id has an established connection to us.
func (t *peerTransport) connectedTo(id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mu.byPeer[id]) > 0
}
