package zkafkatest

import (
	"errors"
	"io"
	"net"
	"sync"
)

// A link is one direction of traffic between two members (or the clients
// and a member): an in-process TCP proxy whose listening address is what
// the source is given (advertised) and which forwards to the destination's
// current address. Its address outlives restarts of the destination.
//
// A link is in one of three states: open (forwarding), paused (every
// connection stays open and new ones are accepted, but no byte is
// forwarded either way until resumed: what a SIGSTOPped process looks like
// from outside), or cut (every connection reset at once and new ones reset
// as they come: what a rejecting firewall looks like). While its
// destination is down, new connections are reset too (a refused
// connection, as to a dead process's port).
type link struct {
	from, to Member
	l        net.Listener

	mu struct {
		sync.Mutex
		target string // the destination's address; "" while it is down
		paused bool
		cut    bool
		silent bool // the source was killed: refuse as cut, apart from the user's cut
		conns  map[*pipe]struct{}
		closed bool
	}
	resumed *sync.Cond // on mu: paused turned false, or the link closed
	wg      sync.WaitGroup
}

// pipe is one proxied connection: the source's and the destination's.
type pipe struct{ src, dst net.Conn }

func newLink(from, to Member, addr string) (*link, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	k := &link{from: from, to: to, l: l}
	k.resumed = sync.NewCond(&k.mu)
	k.mu.conns = map[*pipe]struct{}{}
	k.wg.Add(1)
	go k.accept()
	return k, nil
}

// addr is the link's listening address, the one sources dial.
func (k *link) addr() string { return k.l.Addr().String() }

func (k *link) accept() {
	defer k.wg.Done()
	for {
		c, err := k.l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		k.wg.Add(1)
		go k.serve(c)
	}
}

// serve dials the destination for one accepted connection and forwards
// both ways until either side ends.
func (k *link) serve(src net.Conn) {
	defer k.wg.Done()
	k.mu.Lock()
	target, refused := k.mu.target, k.down()
	k.mu.Unlock()
	if refused || target == "" {
		reset(src)
		return
	}
	dst, err := net.Dial("tcp", target)
	if err != nil {
		reset(src)
		return
	}
	p := &pipe{src: src, dst: dst}
	k.mu.Lock()
	if k.down() {
		k.mu.Unlock()
		reset(src)
		reset(dst)
		return
	}
	k.mu.conns[p] = struct{}{}
	k.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { k.copy(dst, src); done <- struct{}{} }()
	go func() { k.copy(src, dst); done <- struct{}{} }()
	<-done
	src.Close()
	dst.Close()
	<-done
	k.mu.Lock()
	delete(k.mu.conns, p)
	k.mu.Unlock()
}

// copy forwards r to w, holding each chunk while the link is paused.
func (k *link) copy(w io.Writer, r io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if !k.waitOpen() {
				return
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// waitOpen blocks while the link is paused; false if it was cut or closed.
func (k *link) waitOpen() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for k.mu.paused && !k.down() {
		k.resumed.Wait()
	}
	return !k.down()
}

// down reports that the link forwards nothing. k.mu must be held.
func (k *link) down() bool { return k.mu.cut || k.mu.silent || k.mu.closed }

// setTarget points the link at the destination's address ("": down; new
// connections are closed, and so are the current ones, which led to the
// previous address).
func (k *link) setTarget(addr string) {
	k.mu.Lock()
	k.mu.target = addr
	k.mu.Unlock()
	if addr == "" {
		k.closeConns()
	}
}

func (k *link) setPaused(paused bool) {
	k.mu.Lock()
	k.mu.paused = paused
	k.mu.Unlock()
	k.resumed.Broadcast()
}

// setCut cuts (true) or heals the link; a cut closes its connections.
func (k *link) setCut(cut bool) {
	k.mu.Lock()
	k.mu.cut = cut
	k.mu.Unlock()
	k.resumed.Broadcast()
	if cut {
		k.closeConns()
	}
}

// setSilent is setCut for a killed source (see network.silence).
func (k *link) setSilent(silent bool) {
	k.mu.Lock()
	k.mu.silent = silent
	k.mu.Unlock()
	k.resumed.Broadcast()
	if silent {
		k.closeConns()
	}
}

func (k *link) closeConns() {
	k.mu.Lock()
	ps := make([]*pipe, 0, len(k.mu.conns))
	for p := range k.mu.conns {
		ps = append(ps, p)
	}
	k.mu.Unlock()
	for _, p := range ps {
		reset(p.src)
		reset(p.dst)
	}
}

// reset closes c with a TCP reset, as a refused connection or a rejecting
// firewall ends it: clients take it for a network error and retry, where a
// plain close (end of stream) right after connecting looks like a protocol
// mismatch to some (franz-go).
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// state is "open", "paused" or "cut".
func (k *link) state() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.mu.cut:
		return "cut"
	case k.mu.paused:
		return "paused"
	}
	return "open"
}

// close stops the link and waits for its goroutines.
func (k *link) close() {
	k.mu.Lock()
	k.mu.closed = true
	k.mu.Unlock()
	k.resumed.Broadcast()
	k.l.Close()
	k.closeConns()
	k.wg.Wait()
}
