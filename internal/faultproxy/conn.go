package faultproxy

import (
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
	pending []byte // the first Kafka request, read before dialing, sent first

	// Guarded by p.mu.
	server   net.Conn
	clientID string
	known    bool  // clientID is set (or the proxy is not a Kafka proxy)
	replica  int32 // the replica id of its Fetch requests, -1 until one arrives
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
		switch p.modeLocked(c) {
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

// tag records the replica id of a Fetch request, the first time one
// arrives on the connection.
func (c *conn) tag(req request) {
	if req.replica < 0 {
		return
	}
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.replica < 0 {
		c.replica = req.replica
		p.mu.replicaSeen[req.replica]++
	}
}

// refused reports whether a Refuse rule selects the connection now.
func (c *conn) refused() bool {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	return c.p.modeLocked(c) == Refuse
}

// pump forwards both directions until either ends, then closes both.
func (c *conn) pump() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.forward(c.client, c.server, c.pending, c.p.kafka) }()
	go func() { defer wg.Done(); c.forward(c.server, c.client, nil, false) }()
	wg.Wait()
}

// forward copies src to dst (first sending first), through the gate before
// each read and each write, each chunk written when its delay is due. With
// frames (client to a Kafka server) it reads whole request frames and tags
// the connection by the Fetch requests among them before they pass.
func (c *conn) forward(src, dst net.Conn, first []byte, frames bool) {
	defer func() { c.close(c.refused()) }()
	ch := make(chan chunk, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ck := range ch {
			if d := time.Until(ck.due); d > 0 {
				time.Sleep(d)
			}
			if !c.gate() {
				c.close(c.refused()) // unblocks the reader too
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
		var buf []byte
		var n int
		var err error
		if frames {
			buf, err = readFrame(src)
			n = len(buf)
			if err == nil {
				c.tag(parseRequest(buf))
			} else {
				n = 0
			}
		} else {
			buf = make([]byte, 32<<10)
			n, err = src.Read(buf)
		}
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
