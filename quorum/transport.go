package quorum

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// The peer transport carries raft messages (and session activity) between
// the servers of an ensemble over TCP, on each server's peerPort. Every
// server dials every other one and uses that connection only to send; it
// only reads from the connections others dial to it. On the wire:
//
//	hello:  "ZKRP" | version (1) | sender's myid (8)
//	frame:  length (4, of what follows) | kind (1) | body
//	        kind 1: a marshalled raftpb.Message
//	        kind 2: session activity: count (4) | count × (session (8) | timeout ms (4))
//
// Each peer has one bounded send queue and one sender goroutine; Send never
// blocks: when the queue is full the message is dropped and raft is told
// the peer is unreachable (raft retries). A sender that cannot connect
// retries with backoff (50 ms doubling to 1 s), dropping what was queued
// meanwhile.
const (
	peerMagic      = "ZKRP"
	peerVersion    = 1
	frameRaft      = 1
	frameSessions  = 2
	peerQueueLen   = 4096
	maxPeerFrame   = 1 << 30 // a MsgSnap carries a whole snapshot
	peerDialMin    = 50 * time.Millisecond
	peerDialMax    = time.Second
	peerWriteLimit = 10 * time.Second
)

// peerNode is what the transport delivers to: the local raft node.
type peerNode interface {
	Step(ctx context.Context, m *raftpb.Message) error
	ReportUnreachable(id uint64)
	ReportSnapshot(id uint64, delivered bool)
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
	peers map[uint64]*peerSender  // by myid; read-only after newPeerTransport
	addrs map[uint64]string       // peer address by myid
	stop  chan struct{}
	wg    sync.WaitGroup

	mu struct {
		sync.Mutex
		inbound map[net.Conn]struct{}
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
}

func newPeerTransport(self uint64, addrs map[uint64]string, log *slog.Logger) *peerTransport {
	t := &peerTransport{self: self, log: log, addrs: addrs, peers: map[uint64]*peerSender{}, stop: make(chan struct{})}
	d := &net.Dialer{Timeout: time.Second, KeepAlive: 5 * time.Second}
	t.dial = d.DialContext
	t.mu.inbound = map[net.Conn]struct{}{}
	for id, addr := range addrs {
		if id == self {
			continue
		}
		t.peers[id] = &peerSender{t: t, id: id, addr: addr, queue: make(chan peerItem, peerQueueLen)}
	}
	return t
}

// start begins accepting peers on l and connecting to them.
func (t *peerTransport) start(l net.Listener) {
	t.mu.Lock()
	t.mu.l = l
	t.mu.Unlock()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		t.accept(l)
	}()
	for _, p := range t.peers {
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			p.run()
		}()
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
	close(t.stop)
	if t.mu.l != nil {
		t.mu.l.Close()
	}
	for c := range t.mu.inbound {
		c.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
}

// Send implements raftnode.Transport: it queues each message for its peer
// and never blocks.
func (t *peerTransport) Send(msgs []*raftpb.Message) {
	for _, m := range msgs {
		p := t.peers[m.GetTo()]
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

// sendTouches queues a batch of session activity for peer id; it reports
// false if the batch was dropped.
func (t *peerTransport) sendTouches(id uint64, ts []sessionTouch) bool {
	p := t.peers[id]
	if p == nil || len(ts) == 0 {
		return false
	}
	select {
	case p.queue <- peerItem{touches: ts}:
		return true
	default:
		return false
	}
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

// run connects to the peer and writes its queue, reconnecting with backoff.
func (p *peerSender) run() {
	backoff := peerDialMin
	for {
		select {
		case <-p.t.stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		nc, err := p.t.dial(ctx, "tcp", p.addr)
		cancel()
		if err != nil {
			p.drain()
			select {
			case <-p.t.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, peerDialMax)
			continue
		}
		p.t.log.Debug("connected to peer", "peer", p.id, "addr", p.addr)
		began := time.Now()
		p.write(nc)
		nc.Close()
		if time.Since(began) > peerDialMax {
			backoff = peerDialMin // a connection that worked for a while
			continue
		}
		p.drain()
		select {
		case <-p.t.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, peerDialMax)
	}
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
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	// A peer that goes away without closing is noticed by the writes'
	// deadline; reading the (never written) other direction notices a close.
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, nc)
		close(closed)
	}()
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
		}
		buf = appendPeerFrame(buf[:0], it)
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
		if len(p.queue) == 0 {
			if err := flush(); err != nil {
				p.t.node.ReportUnreachable(p.id)
				return
			}
		}
	}
}

func appendPeerFrame(dst []byte, it peerItem) []byte {
	dst = append(dst, 0, 0, 0, 0)
	if it.msg != nil {
		dst = append(dst, frameRaft)
		var err error
		dst, err = proto.MarshalOptions{}.MarshalAppend(dst, it.msg)
		if err != nil {
			panic(fmt.Sprintf("quorum: marshal raft message: %v", err))
		}
	} else {
		dst = append(dst, frameSessions)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(it.touches)))
		for _, ts := range it.touches {
			dst = binary.BigEndian.AppendUint64(dst, uint64(ts.id))
			dst = binary.BigEndian.AppendUint32(dst, uint32(ts.timeout/time.Millisecond))
		}
	}
	binary.BigEndian.PutUint32(dst, uint32(len(dst)-4))
	return dst
}

// accept takes connections from peers until the listener closes.
func (t *peerTransport) accept(l net.Listener) {
	for {
		nc, err := l.Accept()
		if err != nil {
			select {
			case <-t.stop:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, errTooManyFiles) {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			t.log.Error("peer listener stopped", "err", err)
			return
		}
		t.mu.Lock()
		if t.mu.closed {
			t.mu.Unlock()
			nc.Close()
			return
		}
		t.mu.inbound[nc] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		go func() {
			defer t.wg.Done()
			t.receive(nc)
			t.mu.Lock()
			delete(t.mu.inbound, nc)
			t.mu.Unlock()
			nc.Close()
		}()
	}
}

// receive reads the hello and then frames from one peer.
func (t *peerTransport) receive(nc net.Conn) {
	defer func() {
		if r := recover(); r != nil {
			t.log.Error("panic reading from a peer; connection closed", "panic", r)
		}
	}()
	br := bufio.NewReaderSize(nc, 256<<10)
	var hello [len(peerMagic) + 1 + 8]byte
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(br, hello[:]); err != nil {
		return
	}
	nc.SetReadDeadline(time.Time{})
	if string(hello[:4]) != peerMagic || hello[4] != peerVersion {
		t.log.Warn("not a zkafka peer; closing", "remote", nc.RemoteAddr().String())
		return
	}
	from := binary.BigEndian.Uint64(hello[5:])
	if _, ok := t.addrs[from]; !ok || from == t.self {
		t.log.Warn("connection from an unknown peer; closing", "remote", nc.RemoteAddr().String(), "id", from)
		return
	}
	var hdr [4]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n < 1 || n > maxPeerFrame {
			t.log.Warn("bad frame length from a peer; closing", "peer", from, "len", n)
			return
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return
		}
		switch buf[0] {
		case frameRaft:
			m := &raftpb.Message{}
			if err := proto.Unmarshal(buf[1:], m); err != nil {
				t.log.Warn("undecodable raft message from a peer; closing", "peer", from, "err", err)
				return
			}
			if m.GetFrom() != from {
				t.log.Warn("raft message with a wrong sender; closing", "peer", from, "from", m.GetFrom())
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err := t.node.Step(ctx, m)
			cancel()
			if err != nil {
				t.log.Debug("raft message not taken", "peer", from, "type", m.GetType().String(), "err", err)
			}
		case frameSessions:
			ts, ok := decodeTouches(buf[1:])
			if !ok {
				t.log.Warn("bad session frame from a peer; closing", "peer", from)
				return
			}
			if t.onSes != nil {
				t.onSes(ts)
			}
		default:
			t.log.Warn("unknown frame kind from a peer; closing", "peer", from, "kind", buf[0])
			return
		}
	}
}

func decodeTouches(b []byte) ([]sessionTouch, bool) {
	if len(b) < 4 {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(b))
	b = b[4:]
	if n > len(b)/12 || len(b) != n*12 {
		return nil, false
	}
	out := make([]sessionTouch, n)
	for i := range out {
		out[i].id = int64(binary.BigEndian.Uint64(b))
		out[i].timeout = time.Duration(binary.BigEndian.Uint32(b[8:])) * time.Millisecond
		b = b[12:]
	}
	return out, true
}
