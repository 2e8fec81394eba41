package quorum

import "maps"

// peerSet is the transport's view of the configuration: a sender per peer
// and every member's address (this server's included), by myid.
type peerSet struct {
	senders map[uint64]*peerSender
	addrs   map[uint64]string
}

// newPeerSet builds the set for addrs, keeping the senders of old whose
// address did not change.
func (t *peerTransport) newPeerSet(addrs map[uint64]string, old *peerSet) *peerSet {
	set := &peerSet{senders: map[uint64]*peerSender{}, addrs: maps.Clone(addrs)}
	for id, addr := range addrs {
		if id == t.self {
			continue
		}
		if old != nil {
			if p := old.senders[id]; p != nil && p.addr == addr {
				set.senders[id] = p
				continue
			}
		}
		set.senders[id] = &peerSender{t: t, id: id, addr: addr, queue: make(chan peerItem, peerQueueLen), quit: make(chan struct{}), wake: make(chan struct{}, 1)}
	}
	return set
}

// setPeers makes addrs the configuration after a reconfig: new members
// get a sender (started if the transport runs) and are admitted; members
// that left, or moved to another address, lose their sender and their
// inbound connections.
func (t *peerTransport) setPeers(addrs map[uint64]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closed {
		return
	}
	old := t.set.Load()
	set := t.newPeerSet(addrs, old)
	t.set.Store(set)
	for id, p := range old.senders {
		if set.senders[id] != p {
			close(p.quit)
		}
	}
	for id, ins := range t.mu.byPeer {
		if _, ok := set.addrs[id]; !ok {
			for _, in := range ins {
				in.nc.Close()
			}
		}
	}
	if t.mu.l == nil {
		return // start runs the senders
	}
	for id, p := range set.senders {
		if old.senders[id] != p {
			t.goroutines.Go("zk-peer-sender", p.run)
		}
	}
}
