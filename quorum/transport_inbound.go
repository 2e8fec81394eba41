package quorum

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkafka/zkafka/internal/accept"
)

// The receiving side of the peer transport: what an inbound connection
// may cost before and after its hello.
const (
	// peerHelloTimeout bounds the wait for a new connection's hello (a
	// peer sends it at once, with its first write).
	peerHelloTimeout = 3 * time.Second
	// maxPendingPeers bounds the connections waiting to send their hello;
	// past it the oldest is closed, so a storm of silent connections cannot
	// keep a real peer (whose hello arrives at once) out.
	maxPendingPeers = 16
	// maxConnsPerPeer bounds the connections of one server id: its sender
	// dials one at a time, and a new one may arrive before the old one's
	// close. Past it, the oldest that has delivered no frame yet is closed
	// (else the oldest), as ZooKeeper drops a server's older connection.
	maxConnsPerPeer = 2
	// peerChunkTimeout bounds the wait for each peerChunk of a large frame
	// (the sender's write deadline is peerWriteLimit).
	peerChunkTimeout = 3 * peerWriteLimit
	// refusalReport is how often refusals after the first of each reason
	// are summed up in the log.
	refusalReport = time.Minute
)

// inboundPeer is one connection another server (or anyone) dialed to us.
type inboundPeer struct {
	nc net.Conn
	// from is the id its hello named; 0 while pending.
	from uint64
	// delivered is set once a frame from it was taken.
	delivered atomic.Bool
}

// accept takes connections on the peer port until the transport closes.
func (t *peerTransport) accept(l net.Listener) {
	err := accept.Loop(l, t.stop, t.log, "zookeeper peers", t.admit)
	if err != accept.ErrClosed {
		t.log.Error("peer listener stopped", "err", err)
	}
}

// admit registers a new connection as pending and starts its reader.
func (t *peerTransport) admit(nc net.Conn) {
	in := &inboundPeer{nc: nc}
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		nc.Close()
		return
	}
	t.mu.pending = append(t.mu.pending, in)
	var evicted *inboundPeer
	if len(t.mu.pending) > maxPendingPeers {
		evicted = t.mu.pending[0]
		t.mu.pending = slices.Delete(t.mu.pending, 0, 1)
	}
	t.mu.Unlock()
	if evicted != nil {
		evicted.nc.Close()
		t.refused.note("too many connections without a hello; closed the oldest",
			"remote", evicted.nc.RemoteAddr().String(), "max", maxPendingPeers)
	}
	if !t.goroutines.Go("zk-peer-receiver", func() { t.serveInbound(in) }) {
		t.forget(in)
		nc.Close()
	}
}

// serveInbound runs one inbound connection to its end.
func (t *peerTransport) serveInbound(in *inboundPeer) {
	defer func() {
		if r := recover(); r != nil {
			t.log.Error("panic reading from a peer; connection closed", "panic", r)
		}
		// The peer's last working connection closed: its process may
		// be gone (transport_gone.go).
		if t.forget(in) && in.delivered.Load() {
			t.peerClosed(in.from)
		}
		in.nc.Close()
	}()
	rd, ok := t.secureInbound(in.nc)
	if !ok {
		return
	}
	from, ok := t.hello(rd)
	if !ok || !t.established(in, from) {
		return
	}
	t.receive(in, rd)
}

// hello reads and checks the hello of a new connection, within
// peerHelloTimeout.
func (t *peerTransport) hello(nc net.Conn) (uint64, bool) {
	var hello [peerHelloLen]byte
	nc.SetReadDeadline(time.Now().Add(peerHelloTimeout))
	n, err := io.ReadFull(nc, hello[:])
	nc.SetReadDeadline(time.Time{})
	remote := nc.RemoteAddr().String()
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return 0, false // a probe that connected and left
	case errors.Is(err, os.ErrDeadlineExceeded):
		t.refused.note("no hello in time", "remote", remote, "timeout", peerHelloTimeout)
		return 0, false
	case err != nil && (n < len(peerMagic) || string(hello[:len(peerMagic)]) == peerMagic):
		return 0, false // the connection failed or closed
	case string(hello[:len(peerMagic)]) != peerMagic || hello[len(peerMagic)] != peerVersion:
		t.refused.note("not a zkafka peer (bad hello)", "remote", remote)
		return 0, false
	}
	from := binary.BigEndian.Uint64(hello[len(peerMagic)+1:])
	if _, known := t.set.Load().addrs[from]; !known || from == t.self {
		t.refused.note("hello names a server id that is not a peer in server.N", "remote", remote, "id", from)
		return 0, false
	}
	return from, true
}

// established moves a connection that named server id from from pending
// to that peer's connections, closing one of its older ones past
// maxConnsPerPeer. It reports false if the transport is closing.
func (t *peerTransport) established(in *inboundPeer, from uint64) bool {
	t.mu.Lock()
	if t.mu.closed {
		t.mu.Unlock()
		return false
	}
	t.mu.pending = slices.DeleteFunc(t.mu.pending, func(p *inboundPeer) bool { return p == in })
	in.from = from
	conns := append(t.mu.byPeer[from], in)
	var evicted *inboundPeer
	if len(conns) > maxConnsPerPeer {
		i := slices.IndexFunc(conns, func(p *inboundPeer) bool { return !p.delivered.Load() })
		if i < 0 || i == len(conns)-1 {
			i = 0
		}
		evicted = conns[i]
		conns = slices.Delete(conns, i, i+1)
	}
	t.mu.byPeer[from] = conns
	t.mu.Unlock()
	if p := t.set.Load().senders[from]; p != nil {
		p.awake()
	}
	if evicted != nil {
		evicted.nc.Close()
		t.log.Debug("a newer connection from a peer replaces an older one", "peer", from)
	}
	return true
}

// forget removes a connection from the pending and established sets. It
// reports whether its peer has no other established connection that
// delivered a frame (and the transport is not closing).
func (t *peerTransport) forget(in *inboundPeer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.pending = slices.DeleteFunc(t.mu.pending, func(p *inboundPeer) bool { return p == in })
	if in.from == 0 {
		return false
	}
	conns := slices.DeleteFunc(t.mu.byPeer[in.from], func(p *inboundPeer) bool { return p == in })
	if len(conns) == 0 {
		delete(t.mu.byPeer, in.from)
	} else {
		t.mu.byPeer[in.from] = conns
	}
	return !t.mu.closed && !slices.ContainsFunc(conns, func(p *inboundPeer) bool { return p.delivered.Load() })
}

// receive reads the frames of a connection past its hello from rd (in.nc,
// or the TLS connection over it) and delivers them, until an error or a
// frame the limits refuse.
func (t *peerTransport) receive(in *inboundPeer, rd net.Conn) {
	from := in.from
	fr := &peerFrameReader{br: bufio.NewReaderSize(rd, 256<<10), limits: t.limits,
		beforeChunk: func() { in.nc.SetReadDeadline(time.Now().Add(peerChunkTimeout)) }}
	for {
		kind, body, err := fr.next()
		in.nc.SetReadDeadline(time.Time{})
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.refused.note("bad frame from a peer; connection closed", "peer", from, "err", err)
			}
			return
		}
		it, err := decodePeerFrame(kind, body, t.limits)
		if err != nil {
			t.refused.note("bad frame from a peer; connection closed", "peer", from, "err", err)
			return
		}
		if it.msg != nil && it.msg.GetFrom() != from {
			t.refused.note("raft message with a wrong sender; connection closed", "peer", from, "from", it.msg.GetFrom())
			return
		}
		in.delivered.Store(true)
		t.deliver(from, it)
	}
}

// deliver hands one decoded frame to raft or to the session tracker.
func (t *peerTransport) deliver(from uint64, it peerItem) {
	if it.msg == nil {
		if t.onSes != nil {
			t.onSes(it.touches)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	err := t.node.Step(ctx, it.msg)
	cancel()
	if err != nil {
		t.log.Debug("raft message not taken", "peer", from, "type", it.msg.GetType().String(), "err", err)
	}
}

// refusalLog logs the first refusal of each reason in full, then counts the
// others and logs their number at most once per refusalReport, so that a
// storm of garbage on the peer port cannot flood the log.
type refusalLog struct {
	log interface {
		Warn(msg string, args ...any)
	}
	now func() time.Time // nil: time.Now
	mu  struct {
		sync.Mutex
		seen       map[string]bool
		suppressed int
		since      time.Time
	}
}

// note records one refusal.
func (r *refusalLog) note(reason string, args ...any) {
	r.mu.Lock()
	if r.mu.seen == nil {
		r.mu.seen = map[string]bool{}
	}
	if !r.mu.seen[reason] {
		r.mu.seen[reason] = true
		r.mu.Unlock()
		r.log.Warn("peer port: "+reason+" (further ones are counted)", args...)
		return
	}
	r.mu.suppressed++
	now := time.Now()
	if r.now != nil {
		now = r.now()
	}
	if r.mu.since.IsZero() {
		r.mu.since = now
	}
	if now.Sub(r.mu.since) < refusalReport {
		r.mu.Unlock()
		return
	}
	n, since := r.mu.suppressed, r.mu.since
	r.mu.suppressed, r.mu.since = 0, now
	r.mu.Unlock()
	r.log.Warn("peer port: refusals since the last report", "count", n, "since", since.Format(time.RFC3339))
}
