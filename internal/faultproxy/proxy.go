package faultproxy

import (
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Mode is what a rule does to the connections it selects.
type Mode int

// The modes, least severe first (a connection takes the most severe rule
// that selects it).
const (
	Pass      Mode = iota // forward (no rule)
	Blackhole             // keep open, pass nothing until healed
	Refuse                // reset open connections, reset new ones at accept
)

func (m Mode) String() string {
	switch m {
	case Pass:
		return "pass"
	case Blackhole:
		return "blackhole"
	case Refuse:
		return "refuse"
	}
	return "mode?"
}

// headerTimeout bounds how long a Kafka connection may take to send its
// first request header.
const headerTimeout = 10 * time.Second

// Proxy forwards connections from 127.0.0.1:port to a target; see the
// package doc.
type Proxy struct {
	kafka bool
	ln    net.Listener
	wg    sync.WaitGroup

	mu struct {
		sync.Mutex
		target       string          // "": down, every connection reset (SetTarget)
		rules        map[string]Mode // client id prefix ("" = all) → mode
		replicaRules map[int32]Mode  // replica id of Fetch requests → mode
		delay        time.Duration
		conns        map[*conn]struct{}
		seen         map[string]int // client id → connections seen
		replicaSeen  map[int32]int  // replica id → connections seen fetching
		closed       bool
	}
	changed *sync.Cond // on mu: rules changed or a connection closed
}

// New starts a proxy to target (host:port) on 127.0.0.1 port 0.
func New(target string) (*Proxy, error) { return start(target, false) }

// NewAt is New listening on addr (host:port; port 0 picks a free one),
// for a proxy whose address must be known before its target is: a
// target "" resets every connection until SetTarget names one.
func NewAt(addr, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return serve(ln, target, false), nil
}

// NewKafka is New for Kafka connections: it reads each connection's first
// request header to learn its client id (see CutClients).
func NewKafka(target string) (*Proxy, error) { return start(target, true) }

func start(target string, kafka bool) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return serve(ln, target, kafka), nil
}

func serve(ln net.Listener, target string, kafka bool) *Proxy {
	p := &Proxy{kafka: kafka, ln: ln}
	p.mu.target = target
	p.mu.rules = map[string]Mode{}
	p.mu.replicaRules = map[int32]Mode{}
	p.mu.replicaSeen = map[int32]int{}
	p.mu.conns = map[*conn]struct{}{}
	p.mu.seen = map[string]int{}
	p.changed = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.acceptLoop()
	return p
}

// Addr is the proxy's listen address (127.0.0.1:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's listen port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Target is the address the proxy forwards to ("": none, see SetTarget).
func (p *Proxy) Target() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.target
}

// Cut applies mode to every connection, open and new.
func (p *Proxy) Cut(mode Mode) { p.CutClients("", mode) }

// CutClients applies mode to the connections whose Kafka client id starts
// with prefix (NewKafka proxies only; "" is every connection). Pass removes
// the rule for prefix.
func (p *Proxy) CutClients(prefix string, mode Mode) {
	p.mu.Lock()
	setRule(p.mu.rules, prefix, mode)
	p.appliedLocked()
}

// CutReplica applies mode to the connections on which a Fetch request
// with replica id id has arrived (NewKafka proxies only): broker id's
// replica fetches, whatever client id its fetcher sends. A connection is
// known as a replica's from its first Fetch on: the ApiVersions and
// Metadata requests a client sends first pass.
func (p *Proxy) CutReplica(id int32, mode Mode) {
	p.mu.Lock()
	setRule(p.mu.replicaRules, id, mode)
	p.appliedLocked()
}

func setRule[K comparable](rules map[K]Mode, k K, mode Mode) {
	if mode == Pass {
		delete(rules, k)
	} else {
		rules[k] = mode
	}
}

// appliedLocked wakes the connections waiting at a gate and resets the
// ones a Refuse rule now selects; it unlocks p.mu.
func (p *Proxy) appliedLocked() {
	var reset []*conn
	for c := range p.mu.conns {
		if c.known && p.modeLocked(c) == Refuse {
			reset = append(reset, c)
		}
	}
	p.changed.Broadcast()
	p.mu.Unlock()
	for _, c := range reset {
		c.close(true)
	}
}

// Heal removes every rule: blackholed connections resume, with what they
// held delivered first; new connections pass.
func (p *Proxy) Heal() {
	p.mu.Lock()
	clear(p.mu.rules)
	clear(p.mu.replicaRules)
	p.changed.Broadcast()
	p.mu.Unlock()
}

// SetDelay makes every chunk read from now on wait d before it is written
// (0 removes the delay).
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.mu.delay = d
	p.mu.Unlock()
}

// Seen returns how many connections so far sent a first request header
// whose client id starts with prefix (NewKafka proxies only).
func (p *Proxy) Seen(prefix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for id, k := range p.mu.seen {
		if strings.HasPrefix(id, prefix) {
			n += k
		}
	}
	return n
}

// SeenReplica returns how many connections so far carried a Fetch from
// replica id.
func (p *Proxy) SeenReplica(id int32) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.replicaSeen[id]
}

// ClientIDs lists the distinct client ids seen so far, sorted.
func (p *Proxy) ClientIDs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for id := range p.mu.seen {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Open returns how many forwarded connections are open now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.conns)
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.mu.closed = true
	conns := make([]*conn, 0, len(p.mu.conns))
	for c := range p.mu.conns {
		conns = append(conns, c)
	}
	p.changed.Broadcast()
	p.mu.Unlock()
	err := p.ln.Close()
	for _, c := range conns {
		c.close(false)
	}
	p.wg.Wait()
	return err
}

// modeLocked is the most severe rule selecting c. p.mu must be held.
func (p *Proxy) modeLocked(c *conn) Mode {
	m := Pass
	for prefix, r := range p.mu.rules {
		if r > m && strings.HasPrefix(c.clientID, prefix) {
			m = r
		}
	}
	if c.replica >= 0 {
		m = max(m, p.mu.replicaRules[c.replica])
	}
	return m
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // temporary (EMFILE): back off
			continue
		}
		p.wg.Add(1)
		go p.handle(nc)
	}
}

// handle reads the Kafka header (if any), applies the rules, dials the
// target and starts the two pumps.
func (p *Proxy) handle(nc net.Conn) {
	defer p.wg.Done()
	c := &conn{p: p, client: nc, replica: -1}
	if !p.track(c) {
		nc.Close()
		return
	}
	if p.kafka {
		nc.SetReadDeadline(time.Now().Add(headerTimeout))
		frame, err := readFrame(nc)
		nc.SetReadDeadline(time.Time{})
		if err != nil {
			c.close(false)
			return
		}
		c.pending = frame
		req := parseRequest(frame)
		p.mu.Lock()
		c.clientID, c.known = req.clientID, true
		p.mu.seen[req.clientID]++
		p.mu.Unlock()
		c.tag(req)
	} else {
		p.mu.Lock()
		c.known = true
		p.mu.Unlock()
	}
	if !c.gate() {
		c.close(true) // refused (or the proxy closed)
		return
	}
	target := p.Target()
	if target == "" {
		c.close(true) // down: refused, as at a dead process's port
		return
	}
	sc, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		c.close(true) // the target is down: the client sees a reset
		return
	}
	if !c.setServer(sc) {
		return
	}
	c.pump()
}

func (p *Proxy) track(c *conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return false
	}
	p.mu.conns[c] = struct{}{}
	return true
}
