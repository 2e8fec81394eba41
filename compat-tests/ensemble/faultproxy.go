package ensemble

import (
	"io"
	"net"
	"sync"
)

// FaultProxy forwards TCP connections from its listener to a target and can
// cut them: while cut, open connections are closed and new ones are closed
// as soon as they are accepted.
type FaultProxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewFaultProxy listens on 127.0.0.1 on a free port and forwards to target.
func NewFaultProxy(target string) (*FaultProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &FaultProxy{l: l, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listening address.
func (p *FaultProxy) Addr() string { return p.l.Addr().String() }

// Cut closes every forwarded connection and refuses new ones until Heal.
func (p *FaultProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Heal lets connections through again.
func (p *FaultProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// Close stops the proxy and closes its connections.
func (p *FaultProxy) Close() {
	p.l.Close()
	p.Cut()
	p.wg.Wait()
}

func (p *FaultProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			in.Close()
			continue
		}
		p.conns[in] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(in)
		}()
	}
}

func (p *FaultProxy) forward(in net.Conn) {
	defer func() {
		p.mu.Lock()
		delete(p.conns, in)
		p.mu.Unlock()
		in.Close()
	}()
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		out.Close()
		return
	}
	p.conns[out] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, out)
		p.mu.Unlock()
		out.Close()
	}()
	done := make(chan struct{}, 2)
	go func() { io.Copy(out, in); out.Close(); done <- struct{}{} }()
	go func() { io.Copy(in, out); in.Close(); done <- struct{}{} }()
	<-done
	<-done
}
