package faultproxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// conn is one forwarded connection: the client's socket, the target's, and
// two pumps (client→server, server→client), each a reader and a writer
// goroutine joined by a channel of timestamped chunks.
type conn struct {
	p       *Proxy
	client  net.Conn
	pending []byte // the Kafka header read before dialing, sent first

	// Guarded by p.mu.
	server   net.Conn
	clientID string
	known    bool // clientID is set (or the proxy is not a Kafka proxy)
	closed   bool

	once sync.Once
}

// chunk is bytes read at a time, to be written when due.
type chunk struct {
	b   []byte
	due time.Time
}

// gate blocks while the connection's rule is Blackhole and reports whether
// it may go on (false once it is refused or closed).
func (c *conn) gate() bool {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if c.closed || p.mu.closed {
			return false
		}
		switch p.modeLocked(c.clientID) {
		case Pass:
			return true
		case Refuse:
			return false
		}
		p.changed.Wait()
	}
}

func (c *conn) setServer(sc net.Conn) bool {
	c.p.mu.Lock()
	if c.closed {
		c.p.mu.Unlock()
		sc.Close()
		return false
	}
	c.server = sc
	c.p.mu.Unlock()
	return true
}

// pump forwards both directions until either ends, then closes both.
func (c *conn) pump() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.forward(c.client, c.server, c.pending) }()
	go func() { defer wg.Done(); c.forward(c.server, c.client, nil) }()
	wg.Wait()
}

// forward copies src to dst (first sending first), through the gate before
// each read and each write, each chunk written when its delay is due.
func (c *conn) forward(src, dst net.Conn, first []byte) {
	defer c.close(false)
	ch := make(chan chunk, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ck := range ch {
			if d := time.Until(ck.due); d > 0 {
				time.Sleep(d)
			}
			if !c.gate() {
				return
			}
			if _, err := dst.Write(ck.b); err != nil {
				c.close(false)
				return
			}
		}
	}()
	defer func() { close(ch); <-done }()
	if len(first) > 0 {
		ch <- chunk{b: first, due: time.Now().Add(c.delay())}
	}
	for {
		if !c.gate() {
			return
		}
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case ch <- chunk{b: buf[:n], due: time.Now().Add(c.delay())}:
			case <-done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (c *conn) delay() time.Duration {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return c.p.mu.delay
}

// close closes both sockets once (reset: with SO_LINGER 0, so the peer
// sees ECONNRESET) and forgets the connection.
func (c *conn) close(reset bool) {
	c.once.Do(func() {
		p := c.p
		p.mu.Lock()
		c.closed = true
		delete(p.mu.conns, c)
		sc := c.server
		p.changed.Broadcast()
		p.mu.Unlock()
		for _, s := range []net.Conn{c.client, sc} {
			if s == nil {
				continue
			}
			if tc, ok := s.(*net.TCPConn); ok && reset {
				tc.SetLinger(0)
			}
			s.Close()
		}
	})
}

// readKafkaHeader reads a request frame's size, api key, version,
// correlation id and client id, and returns those bytes (to forward) and
// the client id ("" when null or when the frame is too short to hold one).
func readKafkaHeader(r io.Reader) ([]byte, string, error) {
	head := make([]byte, 14)
	if _, err := io.ReadFull(r, head[:4]); err != nil {
		return nil, "", err
	}
	size := int32(binary.BigEndian.Uint32(head))
	if size < 10 {
		return head[:4], "", nil // not a header we know: forward as is
	}
	if _, err := io.ReadFull(r, head[4:]); err != nil {
		return nil, "", err
	}
	n := int16(binary.BigEndian.Uint16(head[12:]))
	if n < 0 {
		return head, "", nil
	}
	if int32(n) > size-10 {
		return nil, "", errors.New("faultproxy: client id longer than its frame")
	}
	id := make([]byte, n)
	if _, err := io.ReadFull(r, id); err != nil {
		return nil, "", err
	}
	return append(head, id...), string(id), nil
}
