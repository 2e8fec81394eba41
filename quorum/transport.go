package quorum

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zkafka/zkafka/internal/tracked"
)

// The peer transport carries raft messages (and session activity) between
// the servers of an ensemble over TCP, on each server's peerPort. Every
// server dials every other one and uses that connection only to send; it
// only reads from the connections others dial to it. On the wire, a hello
// and then frames (peerframe.go):
//
//	hello:  "ZKRP" | version (1) | sender's myid (8)
//	frame:  length (4, of what follows) | kind (1) | body
//
// Each peer has one bounded send queue and one sender goroutine; Send never
// blocks: when the queue is full the message is dropped and raft is told
// the peer is unreachable (raft retries). A sender that cannot connect
// retries with backoff (50 ms doubling to 1 s), dropping what was queued
// meanwhile; a connection from that peer ends the wait (it listens again:
// a restarted server hears from the leader at once).
//
// The peer port is open to anyone who can reach it, so the receiving side
// (transport_inbound.go) trusts nothing before the hello names a server.N
// id: a connection must send its hello within peerHelloTimeout, at most
// maxPendingPeers connections may be waiting to (the oldest is dropped for
// a new one), a hello naming an id outside server.N is refused (logged
// once, then counted), a peer has at most maxConnsPerPeer connections, and
// frames are bounded (peerLimits). The hello is not authentication: as in
// ZooKeeper without quorum SASL, whoever names a server's id is taken for
// it. With quorum TLS (sslQuorum, secure_quorum.go) both ends of a
// connection first show a certificate the trust store accepts, and the
// hello and frames travel inside TLS. zkafka does not listen on server.N's election port at all (raft
// elects over these connections), so the kernel refuses connections there.
const (
	peerMagic      = "ZKRP"
	peerVersion    = 1
	peerHelloLen   = len(peerMagic) + 1 + 8
	peerQueueLen   = 4096
	peerDialMin    = 50 * time.Millisecond
	peerDialMax    = time.Second
	peerWriteLimit = 10 * time.Second
)

// peerNode is what the transport delivers to: the local raft node.
type peerNode interface {
	Step(ctx context.Context, m *raftpb.Message) error
	ReportUnreachable(id uint64)
	ReportSnapshot(id uint64, delivered bool)
	// PeerGone: peer id's process is gone (transport_gone.go); connected
	// are the peers with a connection to us.
	PeerGone(id uint64, connected []uint64)
}

// sessionTouch is one session's activity forwarded to the leader.
type sessionTouch struct {
	id      int64
	timeout time.Duration
}

// peerItem is one queued frame: a raft message or a batch of touches.
type peerItem struct {
	msg     *raftpb.Message
	touches []sessionTouch
}

// peerTransport implements raftnode.Transport over TCP.
type peerTransport struct {
	self  uint64
	log   *slog.Logger
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	node  peerNode                // set before the listener starts
	onSes func(ts []sessionTouch) // session activity from another server
	// set is the current members: their senders and addresses. It is
	// replaced whole (setPeers, transport_members.go), never modified.
	set    atomic.Pointer[peerSet]
	limits peerLimits
	// tls is quorum TLS (secure_quorum.go); nil: plain TCP.
	tls  *peerTLS
	stop chan struct{}
	// goroutines are the listener, the senders and the inbound readers.
	goroutines tracked.Group
	// refused logs refused connections and frames once per reason.
	refused refusalLog

	mu struct {
		sync.Mutex
		// pending are the inbound connections that have not sent their
		// hello, oldest first. Invariant: len(pending) <= maxPendingPeers.
		pending []*inboundPeer
		// byPeer are the inbound connections past their hello, oldest
		// first. Invariant: len(byPeer[id]) <= maxConnsPerPeer.
		byPeer map[uint64][]*inboundPeer
		// probing are the peers whose port is being probed after their
		// last connection closed (transport_gone.go).
		probing map[uint64]bool
		l       net.Listener
		closed  bool
	}
}

// peerSender owns the connection to one peer.
type peerSender struct {
	t     *peerTransport
	id    uint64
	addr  string
	queue chan peerItem
	quit  chan struct{} // closed when the peer leaves the configuration
	// wake cuts a backoff short: the peer has just connected to us (it
	// started, or came back), so it listens again. Buffered 1.
	wake chan struct{}
}

// awake cuts the sender's backoff short, if it is waiting to redial.
func (p *peerSender) awake() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func newPeerTransport(self uint64, addrs map[uint64]string, limits peerLimits, log *slog.Logger) *peerTransport {
	t := &peerTransport{self: self, log: log, limits: limits, stop: make(chan struct{})}
	t.refused.log = log
	d := &net.Dialer{Timeout: time.Second, KeepAlive: 5 * time.Second}
	t.dial = d.DialContext
	t.mu.byPeer = map[uint64][]*inboundPeer{}
	t.set.Store(t.newPeerSet(addrs, nil))
	return t
}

// start begins accepting peers on l and connecting to them.
func (t *peerTransport) start(l net.Listener) {
	t.mu.Lock()
	t.mu.l = l
	t.mu.Unlock()
	t.goroutines.Go("zk-peer-listener", func() { t.accept(l) })
	for _, p := range t.set.Load().senders {
		t.goroutines.Go("zk-peer-sender", p.run)
	}
}

// close stops the transport and waits for its goroutines.
func (t *peerTransport) close() {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return
	}
	t.mu.closed = true
	t.goroutines.Close()
	close(t.stop)
	if t.mu.l != nil {
		t.mu.l.Close()
	}
	for _, in := range t.mu.pending {
		in.nc.Close()
	}
	for _, ins := range t.mu.byPeer {
		for _, in := range ins {
			in.nc.Close()
		}
	}
	t.mu.Unlock()
	t.goroutines.Wait(context.Background())
}

// Send implements raftnode.Transport: it queues each message for its peer
// and never blocks.
func (t *peerTransport) Send(msgs []*raftpb.Message) {
	for _, m := range msgs {
		p := t.set.Load().senders[m.GetTo()]
		if p == nil {
			continue
		}
		select {
		case p.queue <- peerItem{msg: m}:
		default:
			t.dropped(p.id, m)
		}
	}
}

// sendTouches queues a batch of session activity for peer id, in as many
// frames as the frame limit needs; it reports false if any was dropped.
func (t *peerTransport) sendTouches(id uint64, ts []sessionTouch) bool {
	p := t.set.Load().senders[id]
	if p == nil || len(ts) == 0 {
		return false
	}
	for len(ts) > 0 {
		n := min(len(ts), t.limits.maxTouches())
		select {
		case p.queue <- peerItem{touches: ts[:n]}:
		default:
			return false
		}
		ts = ts[n:]
	}
	return true
}

// dropped tells raft about a message that did not leave.
func (t *peerTransport) dropped(id uint64, m *raftpb.Message) {
	if t.node == nil {
		return
	}
	t.node.ReportUnreachable(id)
	if m.GetType() == raftpb.MsgSnap {
		t.node.ReportSnapshot(id, false)
	}
}

// run connects to the peer and writes its queue, reconnecting with backoff
// (cut short when the peer connects to us: it listens again).
func (p *peerSender) run() {
	backoff := peerDialMin
	for {
		select {
		case <-p.t.stop:
			return
		case <-p.quit:
			return
		default:
		}
		select {
		case <-p.wake: // a connection from the peer before this dial
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		nc, err := p.t.dial(ctx, "tcp", p.addr)
		cancel()
		if err == nil {
			if tc, ok := nc.(*net.TCPConn); ok {
				tc.SetNoDelay(true)
			}
			nc, err = p.t.secureOutbound(nc, p.id, p.addr)
		}
		if err == nil {
			p.t.log.Debug("connected to peer", "peer", p.id, "addr", p.addr)
			began := time.Now()
			p.write(nc)
			nc.Close()
			p.t.peerClosed(p.id) // transport_gone.go
			if time.Since(began) > peerDialMax {
				backoff = peerDialMin // a connection that worked for a while
				continue
			}
		}
		p.drain()
		if !p.wait(backoff) {
			return
		}
		backoff = min(2*backoff, peerDialMax)
	}
}

// wait waits out a backoff before the next dial; false if the transport
// stops or the peer leaves. A connection from the peer ends it early.
func (p *peerSender) wait(backoff time.Duration) bool {
	t := time.NewTimer(backoff)
	defer t.Stop()
	select {
	case <-p.t.stop:
		return false
	case <-p.quit:
		return false
	case <-p.wake:
	case <-t.C:
	}
	return true
}

// drain drops what is queued while the peer cannot be reached.
func (p *peerSender) drain() {
	for {
		select {
		case it := <-p.queue:
			if it.msg != nil {
				p.t.dropped(p.id, it.msg)
			}
		default:
			return
		}
	}
}

// write sends the hello, then queued frames until an error or stop.
func (p *peerSender) write(nc net.Conn) {
	// A peer that goes away without closing is noticed by the writes'
	// deadline; reading the (never written) other direction notices a close.
	closed := make(chan struct{})
	if !p.t.goroutines.Go("zk-peer-sender-eof", func() {
		io.Copy(io.Discard, nc)
		close(closed)
	}) {
		return
	}
	bw := bufio.NewWriterSize(nc, 256<<10)
	hello := append([]byte(peerMagic), peerVersion)
	hello = binary.BigEndian.AppendUint64(hello, p.t.self)
	bw.Write(hello)
	var buf []byte
	var snaps []*raftpb.Message // MsgSnaps written but not yet flushed
	flush := func() error {
		nc.SetWriteDeadline(time.Now().Add(peerWriteLimit))
		err := bw.Flush()
		for range snaps {
			p.t.node.ReportSnapshot(p.id, err == nil)
		}
		snaps = snaps[:0]
		return err
	}
	if flush() != nil {
		return
	}
	for {
		var it peerItem
		select {
		case it = <-p.queue:
		case <-closed:
			return
		case <-p.t.stop:
			return
		case <-p.quit:
			return
		}
		buf = appendPeerFrame(buf[:0], it)
		if err := p.t.limits.checkOutgoing(buf, it); err != nil {
			// The peer would refuse it; raft will try again (a snapshot
			// retried keeps failing until the limit is raised).
			p.t.refused.note("message too large for a peer", "peer", p.id, "err", err)
			if it.msg != nil {
				p.t.dropped(p.id, it.msg)
			}
		} else {
			nc.SetWriteDeadline(time.Now().Add(peerWriteLimit))
			if _, err := bw.Write(buf); err != nil {
				if it.msg != nil {
					p.t.dropped(p.id, it.msg)
				}
				flush()
				return
			}
			if it.msg != nil && it.msg.GetType() == raftpb.MsgSnap {
				snaps = append(snaps, it.msg)
			}
		}
		if cap(buf) > peerChunk {
			buf = nil // a snapshot's buffer is not kept for the small frames
		}
		if len(p.queue) == 0 {
			if err := flush(); err != nil {
				p.t.node.ReportUnreachable(p.id)
				return
			}
		}
	}
}
