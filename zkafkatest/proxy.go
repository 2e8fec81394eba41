package zkafkatest

import (
	"sync"

	"github.com/zkafka/zkafka/internal/faultproxy"
)

// A link is one direction of traffic between two members (or the clients
// and a member): a faultproxy.Proxy whose listening address is what the
// source is given (advertised) and which forwards to the destination's
// current address. Its address outlives restarts of the destination.
//
// A link is in one of three states: open (forwarding), paused (every
// connection stays open and new ones are accepted, but no byte is
// forwarded either way until resumed: what a SIGSTOPped process looks like
// from outside; faultproxy's Blackhole), or cut (every connection reset at
// once and new ones reset as they come: what a rejecting firewall looks
// like; faultproxy's Refuse). While its destination is down, new
// connections are reset too (a refused connection, as to a dead process's
// port).
type link struct {
	from, to Member
	listener string // see linkKey
	p        *faultproxy.Proxy

	mu struct {
		sync.Mutex
		paused bool
		cut    bool
		silent bool // the source was killed: refuse as cut, apart from the user's cut
	}
}

func newLink(from, to Member, addr string) (*link, error) {
	p, err := faultproxy.NewAt(addr, "")
	if err != nil {
		return nil, err
	}
	return &link{from: from, to: to, p: p}, nil
}

// addr is the link's listening address, the one sources dial.
func (k *link) addr() string { return k.p.Addr() }

// setTarget points the link at the destination's address ("": down). The
// current connections, which led to the previous address, are reset.
func (k *link) setTarget(addr string) { k.p.SetTarget(addr) }

func (k *link) setPaused(paused bool) { k.set(func() { k.mu.paused = paused }) }

// setCut cuts (true) or heals the link; a cut resets its connections.
func (k *link) setCut(cut bool) { k.set(func() { k.mu.cut = cut }) }

// setSilent is setCut for a killed source (see network.silence).
func (k *link) setSilent(silent bool) { k.set(func() { k.mu.silent = silent }) }

// set changes the link's state with change and applies the proxy rule it
// comes to: a cut (the user's or a kill's) over a pause over open.
func (k *link) set(change func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	change()
	mode := faultproxy.Pass
	switch {
	case k.mu.cut || k.mu.silent:
		mode = faultproxy.Refuse
	case k.mu.paused:
		mode = faultproxy.Blackhole
	}
	k.p.Cut(mode)
}

// closeConns resets the link's open connections, its state unchanged.
func (k *link) closeConns() { k.p.Reset() }

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
func (k *link) close() { k.p.Close() }
