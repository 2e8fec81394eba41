package zkshell

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/zkproto"
)

// The go-zookeeper client (v1.0.4) has no addWatch, removeWatches, whoAmI,
// getEphemerals or getAllChildrenNumber, and these must run on the shell's
// own session: getEphemerals lists the session's ephemerals, whoami its
// identities, and a persistent watch fires on the connection that set it.
// So the shell dials through a sidecar: a net.Conn wrapper that writes
// these requests, encoded with zkproto, between the client's own frames
// (the client writes each frame with one Write) with xids from a range the
// client never reaches, and takes their replies out of the stream before
// the client reads it. The client keeps doing the session: handshake,
// pings, reconnection, the other requests.

// sidecarFirstXid is where the sidecar's xids start; the client counts its
// own up from 1.
const sidecarFirstXid = 0x70000000

// sidecar is the shell's side channel on the client's current connection.
type sidecar struct {
	mu struct {
		sync.Mutex
		conn    *sideConn // the client's current connection; nil before the first dial
		nextXid int32
	}
}

// dialer is the zk.Dialer that wraps every connection the client makes.
func (s *sidecar) dialer(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	sc := &sideConn{Conn: c, pending: map[int32]chan reply{}}
	s.mu.Lock()
	s.mu.conn = sc
	if s.mu.nextXid == 0 {
		s.mu.nextXid = sidecarFirstXid
	}
	s.mu.Unlock()
	return sc, nil
}

// reply is one sidecar reply: its error code and body.
type reply struct {
	err  zkproto.Err
	body []byte
}

// errNoConnection is a sidecar request with no connection to write to.
var errNoConnection = errors.New("not connected")

// call sends a request with op and body (nil for none) on the current
// connection and waits for its reply, at most timeout.
func (s *sidecar) call(op zkproto.OpCode, body zkproto.Record, timeout time.Duration) ([]byte, error) {
	s.mu.Lock()
	sc := s.mu.conn
	xid := s.mu.nextXid
	s.mu.nextXid++
	s.mu.Unlock()
	if sc == nil {
		return nil, errNoConnection
	}
	ch := make(chan reply, 1)
	if err := sc.send(xid, op, body, ch); err != nil {
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, zk.ErrConnectionClosed
		}
		if r.err != zkproto.ErrOK {
			return nil, r.err
		}
		return r.body, nil
	case <-time.After(timeout):
		return nil, zk.ErrConnectionClosed
	}
}

// sideConn is one connection of the client with the sidecar's requests
// mixed in.
type sideConn struct {
	net.Conn
	writeMu sync.Mutex // one frame at a time: the client's or the sidecar's

	// Read side, used only by the client's one reading goroutine.
	handshakeDone bool   // the first frame (ConnectResponse) has passed
	in            []byte // bytes read from the network not yet handed out or parsed
	scratch       []byte // what each network read reads into
	out           []byte // bytes ready to hand to the client

	pendingMu sync.Mutex
	pending   map[int32]chan reply // the sidecar's requests waiting for replies
	closed    bool
}

func (c *sideConn) Write(p []byte) (int, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.Conn.Write(p)
}

func (c *sideConn) send(xid int32, op zkproto.OpCode, body zkproto.Record, ch chan reply) error {
	c.pendingMu.Lock()
	if c.closed {
		c.pendingMu.Unlock()
		return zk.ErrConnectionClosed
	}
	c.pending[xid] = ch
	c.pendingMu.Unlock()
	frame := zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: xid, Type: op}, body)
	_, err := c.Write(frame)
	return err
}

// Read hands the client the stream without the sidecar's replies.
func (c *sideConn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if err := c.fill(); err != nil {
			c.fail()
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// fill reads from the network and moves every complete frame from in to
// out, except the sidecar's replies, which go to their callers.
func (c *sideConn) fill() error {
	if c.scratch == nil {
		c.scratch = make([]byte, 64<<10)
	}
	n, err := c.Conn.Read(c.scratch)
	c.in = append(c.in, c.scratch[:n]...)
	for len(c.in) >= 4 {
		size := int(binary.BigEndian.Uint32(c.in))
		if len(c.in) < 4+size {
			break
		}
		frame := c.in[:4+size]
		c.in = c.in[4+size:]
		if c.handshakeDone && c.takeReply(frame[4:]) {
			continue
		}
		c.handshakeDone = true
		c.out = append(c.out, frame...)
	}
	if err != nil && len(c.out) == 0 {
		return err
	}
	if n == 0 && err == nil && len(c.out) == 0 {
		return io.ErrNoProgress
	}
	return nil
}

// takeReply delivers body to the sidecar request it answers, if any.
func (c *sideConn) takeReply(body []byte) bool {
	if len(body) < zkproto.ReplyHeaderSize {
		return false
	}
	var h zkproto.ReplyHeader
	h.Decode(zkproto.NewReader(body))
	c.pendingMu.Lock()
	ch, ok := c.pending[h.Xid]
	delete(c.pending, h.Xid)
	c.pendingMu.Unlock()
	if !ok {
		return false
	}
	ch <- reply{err: h.Err, body: append([]byte(nil), body[zkproto.ReplyHeaderSize:]...)}
	return true
}

// fail ends the sidecar's waiting requests when the connection ends.
func (c *sideConn) fail() {
	c.pendingMu.Lock()
	defer c.pendingMu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	for xid, ch := range c.pending {
		close(ch)
		delete(c.pending, xid)
	}
}

func (c *sideConn) Close() error {
	c.fail()
	return c.Conn.Close()
}
