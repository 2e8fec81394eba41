package zkafkatest

import (
	"fmt"
	"sort"
	"sync"
)

// network is the cluster's links, one per direction of each pair of
// members that talk: clients → each server, each broker → each ZooKeeper
// server, each ZooKeeper server → each other one, and the harness → each
// ZooKeeper server.
type network struct {
	mu    sync.Mutex
	links map[linkKey]*link
}

// linkKey names a link: its source and destination, and for the clients'
// links to a broker's further client listeners the listener's name (""
// for the first one, and for every other link).
type linkKey struct {
	from, to Member
	listener string
}

func newNetwork() *network { return &network{links: map[linkKey]*link{}} }

func (n *network) add(from, to Member, addr string) (*link, error) {
	return n.addListener(from, to, "", addr)
}

// addListener adds the link from → to of the destination's listener.
func (n *network) addListener(from, to Member, listener, addr string) (*link, error) {
	k, err := newLink(from, to, addr)
	if err != nil {
		return nil, fmt.Errorf("zkafkatest: the link %s → %s: %w", from, to, err)
	}
	k.listener = listener
	n.mu.Lock()
	n.links[linkKey{from, to, listener}] = k
	n.mu.Unlock()
	return k, nil
}

// get returns the link from → to, or nil.
func (n *network) get(from, to Member) *link { return n.getListener(from, to, "") }

// getListener returns the link from → to of the destination's listener.
func (n *network) getListener(from, to Member, listener string) *link {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.links[linkKey{from, to, listener}]
}

// matching returns the links for which keep is true, in a stable order.
func (n *network) matching(keep func(from, to Member) bool) []*link {
	n.mu.Lock()
	var out []*link
	for key, k := range n.links {
		if keep(key.from, key.to) {
			out = append(out, k)
		}
	}
	n.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].addr() < out[j].addr() })
	return out
}

// to returns every link into m (the harness's included).
func (n *network) to(m Member) []*link {
	return n.matching(func(_, to Member) bool { return to == m })
}

// touching returns the links from or to m, but the harness's.
func (n *network) touching(m Member) []*link {
	return n.matching(func(from, to Member) bool { return from != harness && (from == m || to == m) })
}

// between returns the links a → b and b → a.
func (n *network) between(a, b Member) []*link {
	return n.matching(func(from, to Member) bool { return from == a && to == b || from == b && to == a })
}

// silence cuts (or restores) every link from m without touching the
// user's cuts: a killed member says nothing more.
func (n *network) silence(m Member, on bool) {
	for _, k := range n.matching(func(from, _ Member) bool { return from == m }) {
		k.setSilent(on)
	}
}

func (n *network) close() {
	for _, k := range n.matching(func(Member, Member) bool { return true }) {
		k.close()
	}
}

// LinkState is one link as Links reports it.
type LinkState struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Addr  string `json:"addr"`  // where the source connects
	State string `json:"state"` // "open", "paused" or "cut"
	// Listener names a broker's further client listener (StartBroker).
	Listener string `json:"listener,omitempty"`
	Open     int    `json:"open"` // connections open through it now
}

func (n *network) states() []LinkState {
	var out []LinkState
	for _, k := range n.matching(func(from, _ Member) bool { return from != harness }) {
		out = append(out, LinkState{From: k.from.String(), To: k.to.String(), Addr: k.addr(), State: k.state(), Listener: k.listener, Open: k.p.Open()})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].To != out[j].To {
			return out[i].To < out[j].To
		}
		return out[i].From < out[j].From
	})
	return out
}
