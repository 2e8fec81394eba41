package ensemble

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// proxies puts a FaultProxy on every ordered pair of peers.
type proxies struct {
	byPair map[[2]uint64]*FaultProxy
}

func newProxies(t *testing.T) (*proxies, func(from, to uint64, real string) string) {
	p := &proxies{byPair: map[[2]uint64]*FaultProxy{}}
	return p, func(from, to uint64, real string) string {
		fp, err := NewFaultProxy(real)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(fp.Close)
		p.byPair[[2]uint64{from, to}] = fp
		return fp.Addr()
	}
}

// cut stops what from sends to to.
func (p *proxies) cut(from, to uint64)  { p.byPair[[2]uint64{from, to}].Cut() }
func (p *proxies) heal(from, to uint64) { p.byPair[[2]uint64{from, to}].Heal() }

// isolate cuts id from every other server, both ways.
func (p *proxies) isolate(id uint64) {
	for pair, fp := range p.byPair {
		if pair[0] == id || pair[1] == id {
			fp.Cut()
		}
	}
}

func (p *proxies) healAll() {
	for _, fp := range p.byPair {
		fp.Heal()
	}
}

// TestPartitions cuts the leader off (both ways), heals, then cuts the new
// leader's outgoing direction only, and heals, while six clients (two per
// server, each bound to its server) run get/set/compare-and-set: the
// minority stops taking writes, the majority goes on, after healing all
// servers agree, and the history is linearizable.
func TestPartitions(t *testing.T) {
	px, peerAddr := newProxies(t)
	e := startEnsemble(t, 3, 0, peerAddr)
	keys := []string{"/lin0", "/lin1", "/lin2"}
	setup := dial(t, e.Addrs(), 4*time.Second)
	for _, k := range keys {
		if _, err := setup.Create(k, []byte("init"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	h := &linHistory{base: time.Now()}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	clientServer := map[int]uint64{}
	var conns []*zk.Conn
	for i := range 6 {
		s := e.Servers[i%3]
		c := dial(t, []string{s.Addr()}, 3*time.Second)
		conns = append(conns, c)
		clientServer[i] = s.ID()
		wg.Add(1)
		go func() { defer wg.Done(); linClient(h, i, c, keys, stop) }()
	}
	time.Sleep(1500 * time.Millisecond)

	// 1. The leader is cut off both ways.
	old := e.WaitLeader(5 * time.Second)
	if old == nil {
		t.Fatalf("no leader: %s", modes(e))
	}
	px.isolate(old.ID())
	cutAt := time.Now()
	var majority []*zkserver.Server
	for _, s := range e.Servers {
		if s != old {
			majority = append(majority, s)
		}
	}
	waitFor(t, 10*time.Second, "a leader in the majority", func() error {
		for _, s := range majority {
			if s.Mode() == "leader" {
				return nil
			}
		}
		return fmt.Errorf("modes %s", modes(e))
	})
	waitFor(t, 5*time.Second, "the isolated old leader stops serving", func() error {
		if m := old.Mode(); m != "" {
			return fmt.Errorf("it reports %q", m)
		}
		return nil
	})
	t.Logf("isolated leader %d: majority leader and minority stopped after %v", old.ID(), time.Since(cutAt).Round(time.Millisecond))
	waitFor(t, 10*time.Second, "the majority takes writes", func() error {
		if n := h.ackedBetween(func(c int) bool { return clientServer[c] != old.ID() }, cutAt, time.Now()); n < 10 {
			return fmt.Errorf("%d writes acknowledged", n)
		}
		return nil
	})
	time.Sleep(time.Second)
	healAt := time.Now()
	if n := h.ackedBetween(func(c int) bool { return clientServer[c] == old.ID() }, cutAt.Add(500*time.Millisecond), healAt); n > 0 {
		t.Fatalf("the isolated minority acknowledged %d writes", n)
	}
	px.healAll()
	waitFor(t, 10*time.Second, "all serve after healing", func() error {
		for _, s := range e.Servers {
			if s.Mode() == "" {
				return fmt.Errorf("modes %s", modes(e))
			}
		}
		return nil
	})
	time.Sleep(time.Second)

	// 2. One way: the leader's messages to the others are lost, theirs to
	// it arrive.
	l2 := e.WaitLeader(5 * time.Second)
	if l2 == nil {
		t.Fatalf("no leader: %s", modes(e))
	}
	for _, s := range e.Servers {
		if s != l2 {
			px.cut(l2.ID(), s.ID())
		}
	}
	oneWay := time.Now()
	waitFor(t, 10*time.Second, "another leader after a one-way cut", func() error {
		for _, s := range e.Servers {
			if s != l2 && s.Mode() == "leader" {
				return nil
			}
		}
		return fmt.Errorf("modes %s", modes(e))
	})
	t.Logf("one-way cut of leader %d: new leader after %v (modes %s)", l2.ID(), time.Since(oneWay).Round(time.Millisecond), modes(e))
	time.Sleep(1500 * time.Millisecond)
	px.healAll()
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	for _, c := range conns {
		c.Close() // pending calls end with an unknown outcome
	}
	wg.Wait()
	agree(t, e, "/")
	h.check(t, "during partitions")
}

// ackedBetween counts the writes of the clients selected by who that were
// called and acknowledged within [from, to].
func (h *linHistory) ackedBetween(who func(client int) bool, from, to time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, w := range h.acked {
		if who(w.client) && !w.call.Before(from) && !w.return_.After(to) {
			n++
		}
	}
	return n
}
