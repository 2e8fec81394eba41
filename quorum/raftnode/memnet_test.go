package raftnode

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// memNet is an in-memory network between nodes: each node has an inbox
// drained by its own goroutine (so messages between two nodes stay in
// order), messages are marshaled and unmarshaled as on a wire, and a node
// can be isolated (every message to or from it is dropped).
type memNet struct {
	mu       sync.Mutex
	nodes    map[uint64]*Node
	isolated map[uint64]bool
	closed   bool                     // close has begun: late deliveries are dropped
	slowAck  map[uint64]time.Duration // append acknowledgements from a node sent this late
	inbox    map[uint64]chan memMsg
	wg       sync.WaitGroup
}

// memMsg is one marshaled message in an inbox, or (flushed set) a marker
// that flush waits for.
type memMsg struct {
	b       []byte
	flushed chan struct{}
}

func newMemNet(ids ...uint64) *memNet {
	net := &memNet{nodes: map[uint64]*Node{}, isolated: map[uint64]bool{}, slowAck: map[uint64]time.Duration{}, inbox: map[uint64]chan memMsg{}}
	for _, id := range ids {
		ch := make(chan memMsg, 8192)
		net.inbox[id] = ch
		net.wg.Go(func() { net.deliver(id, ch) })
	}
	return net
}

// transport returns the Transport of node from.
func (net *memNet) transport(from uint64) Transport { return memTransport{net, from} }

type memTransport struct {
	net  *memNet
	from uint64
}

func (t memTransport) Send(msgs []*raftpb.Message) {
	for _, m := range msgs {
		if t.net.cut(t.from, m.GetTo()) {
			continue
		}
		b, err := proto.Marshal(m)
		if err != nil {
			panic(err)
		}
		if d := t.net.ackDelay(t.from, m); d > 0 {
			inbox := t.net.inbox[m.GetTo()]
			t.net.wg.Add(1)
			time.AfterFunc(d, func() {
				defer t.net.wg.Done()
				t.net.mu.Lock()
				defer t.net.mu.Unlock()
				if t.net.closed {
					return
				}
				select {
				case inbox <- memMsg{b: b}:
				default:
				}
			})
			continue
		}
		select {
		case t.net.inbox[m.GetTo()] <- memMsg{b: b}:
		default: // a full inbox drops, like a congested link
		}
	}
}

// ackDelay is how late m, from node from, is delivered: slowAck's delay
// for an append acknowledgement, else 0.
func (net *memNet) ackDelay(from uint64, m *raftpb.Message) time.Duration {
	if m.GetType() != raftpb.MsgAppResp {
		return 0
	}
	net.mu.Lock()
	defer net.mu.Unlock()
	return net.slowAck[from]
}

func (net *memNet) cut(from, to uint64) bool {
	net.mu.Lock()
	defer net.mu.Unlock()
	return net.isolated[from] || net.isolated[to]
}

func (net *memNet) deliver(to uint64, inbox chan memMsg) {
	for mm := range inbox {
		if mm.flushed != nil {
			close(mm.flushed)
			continue
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(mm.b, m); err != nil {
			panic(err)
		}
		net.mu.Lock()
		n := net.nodes[to]
		drop := net.isolated[to] || net.isolated[m.GetFrom()]
		net.mu.Unlock()
		if n == nil || drop {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		n.Step(ctx, m) // ErrStopped for a stopped node: dropped
		cancel()
	}
}

// flush returns once every message sent to node to before the call has
// been handed to its Step (or dropped), as a Transport has delivered all
// frames of a peer's connections once they closed.
func (net *memNet) flush(to uint64) {
	done := make(chan struct{})
	net.inbox[to] <- memMsg{flushed: done}
	<-done
}

func (net *memNet) setNode(id uint64, n *Node) {
	net.mu.Lock()
	defer net.mu.Unlock()
	net.nodes[id] = n
}

func (net *memNet) isolate(id uint64, on bool) {
	net.mu.Lock()
	defer net.mu.Unlock()
	net.isolated[id] = on
}

func (net *memNet) close() {
	net.mu.Lock()
	net.closed = true
	net.mu.Unlock()
	for _, ch := range net.inbox {
		close(ch)
	}
	net.wg.Wait()
}

// cluster is a group of nodes over a memNet, each with a testSM.
type cluster struct {
	t     *testing.T
	net   *memNet
	peers []Peer
	cfgs  map[uint64]Config
	nodes map[uint64]*Node
	sms   map[uint64]*testSM
}

func newCluster(t *testing.T, peers []Peer, tune func(*Config)) *cluster {
	return newClusterSpare(t, peers, nil, tune)
}

// newClusterSpare is newCluster with room on the network for the nodes
// spare, which are not started (see join).
func newClusterSpare(t *testing.T, peers []Peer, spare []uint64, tune func(*Config)) *cluster {
	var ids []uint64
	for _, p := range peers {
		ids = append(ids, p.ID)
	}
	c := &cluster{t: t, net: newMemNet(append(slices.Clone(ids), spare...)...), peers: peers,
		cfgs: map[uint64]Config{}, nodes: map[uint64]*Node{}, sms: map[uint64]*testSM{}}
	for _, id := range ids {
		cfg := testConfig(id, t.TempDir())
		cfg.Peers = peers
		cfg.Transport = c.net.transport(id)
		if tune != nil {
			tune(&cfg)
		}
		c.cfgs[id] = cfg
		c.start(id)
	}
	t.Cleanup(c.stop)
	return c
}

// start (re)starts node id on its directory with a fresh state machine.
func (c *cluster) start(id uint64) {
	sm := &testSM{}
	n := mustStart(c.t, c.cfgs[id], sm)
	c.nodes[id], c.sms[id] = n, sm
	c.net.setNode(id, n)
}

func (c *cluster) stopNode(id uint64) {
	if err := c.nodes[id].Stop(); err != nil {
		c.t.Errorf("Stop(%d): %v", id, err)
	}
}

func (c *cluster) stop() {
	for id := range c.nodes {
		c.stopNode(id)
	}
	c.net.close()
}

// leader waits until the nodes in ids agree on a leader among them and
// returns it.
func (c *cluster) leader(ids ...uint64) uint64 {
	c.t.Helper()
	var lead uint64
	waitFor(c.t, 10*time.Second, "a leader", func() bool {
		lead = c.nodes[ids[0]].Status().Leader
		if lead == 0 {
			return false
		}
		found := false
		for _, id := range ids {
			if c.nodes[id].Status().Leader != lead {
				return false
			}
			found = found || id == lead
		}
		return found && c.nodes[lead].Status().Role == RoleLeader
	})
	return lead
}

// converged waits until the state machines of ids hold the same entries
// and at least min of them.
func (c *cluster) converged(min int, ids ...uint64) []applied {
	c.t.Helper()
	var ref []applied
	waitFor(c.t, 15*time.Second, "converged state machines", func() bool {
		ref = c.sms[ids[0]].state()
		if len(ref) < min {
			return false
		}
		for _, id := range ids[1:] {
			if !equalApplied(c.sms[id].state(), ref) {
				return false
			}
		}
		return true
	})
	return ref
}

func equalApplied(a, b []applied) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func voters(ids ...uint64) []Peer {
	var ps []Peer
	for _, id := range ids {
		ps = append(ps, Peer{ID: id})
	}
	return ps
}
