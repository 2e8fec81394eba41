package faultproxy

// SetTarget points the proxy at addr from now on; "" marks the target
// down: new connections are reset as a dead process's port resets them.
// Either way the open connections, which lead to the previous target, are
// reset: a restarted server has none of its predecessor's connections.
func (p *Proxy) SetTarget(addr string) {
	p.mu.Lock()
	p.mu.target = addr
	p.mu.Unlock()
	p.Reset()
}

// Reset resets every open connection (SO_LINGER 0) and keeps the rules:
// new connections are handled as before.
func (p *Proxy) Reset() {
	p.mu.Lock()
	conns := make([]*conn, 0, len(p.mu.conns))
	for c := range p.mu.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.close(true)
	}
}
