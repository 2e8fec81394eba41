package ensemble

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// The peer transport's hello (quorum/transport.go): "ZKRP", version 1,
// the sender's myid.
func peerHello(id uint64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte("ZKRP"), 1), id)
}

// stormTargets returns the peer and election addresses of every server,
// from the server.N lines of the first server's zoo.cfg.
func stormTargets(t *testing.T, e *zkserver.Ensemble) (peer, election []string) {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(e.Servers[0].Dir(), "zoo.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(cfg), "\n") {
		if !strings.HasPrefix(l, "server.") {
			continue
		}
		_, v, _ := strings.Cut(l, "=")
		v, _, _ = strings.Cut(v, ";")
		f := strings.Split(v, ":") // host:peerPort:electionPort:role
		peer = append(peer, net.JoinHostPort(f[0], f[1]))
		election = append(election, net.JoinHostPort(f[0], f[2]))
	}
	if len(peer) != len(e.Servers) {
		t.Fatalf("%d server.N lines for %d servers", len(peer), len(e.Servers))
	}
	return peer, election
}

// storm hits addr with garbage until stop: random bytes, hellos naming
// unknown ids, hellos naming a real id followed by a length prefix of
// almost 1 GiB (a MsgSnap's opening, then some bytes), silent half-open
// connections, and bursts of many connections held open.
type storm struct {
	conns, refused atomic.Int64
}

func (s *storm) hit(addr string, ids int, stop <-chan struct{}, rng *rand.Rand) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		var payload []byte
		hold := time.Duration(0)
		switch i % 5 {
		case 0: // random bytes
			payload = make([]byte, 1+rng.IntN(4096))
			for j := range payload {
				payload[j] = byte(rng.Uint32())
			}
		case 1: // an unknown server id
			payload = append(peerHello(uint64(ids+1+rng.IntN(1000))), 0, 0, 0, 9, 1, 2, 3)
		case 2: // a real id, then a frame claiming almost 1 GiB
			payload = append(peerHello(uint64(1+rng.IntN(ids))), 0x3f, 0xff, 0xff, 0xff, 1, 0x08, 7)
			payload = append(payload, make([]byte, 256<<10)...)
			hold = 500 * time.Millisecond
		case 3: // half-open: a partial hello, then silence
			payload = []byte("ZK")
			hold = time.Duration(1+rng.IntN(4)) * time.Second
		case 4: // many connections at once, held open
			s.burst(addr, 64, 2*time.Second, stop)
			continue
		}
		s.one(addr, payload, hold, stop)
	}
}

// one sends payload on a new connection, keeps it open for hold (or until
// stop), then closes it.
func (s *storm) one(addr string, payload []byte, hold time.Duration, stop <-chan struct{}) {
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		s.refused.Add(1)
		time.Sleep(5 * time.Millisecond)
		return
	}
	s.conns.Add(1)
	nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
	nc.Write(payload)
	if hold > 0 {
		select {
		case <-stop:
		case <-time.After(hold):
		}
	}
	nc.Close()
}

func (s *storm) burst(addr string, n int, hold time.Duration, stop <-chan struct{}) {
	var conns []net.Conn
	for range n {
		nc, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			s.refused.Add(1)
			break
		}
		s.conns.Add(1)
		conns = append(conns, nc)
	}
	if len(conns) == 0 {
		time.Sleep(5 * time.Millisecond)
		return
	}
	select {
	case <-stop:
	case <-time.After(hold):
	}
	for _, nc := range conns {
		nc.Close()
	}
}

// peakRSS is a process's VmHWM from /proc, in bytes.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM")
}

// refusedByServer reports whether the server closes nc (rather than the
// read timing out).
func refusedByServer(nc net.Conn, within time.Duration) bool {
	nc.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, nc)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// maxStormRSS bounds each server's peak resident memory through the storm.
const maxStormRSS = 256 << 20

// TestPeerPortStorm: a three-voter ensemble keeps committing a client's
// writes while garbage storms the peer and election ports of every server;
// each server's peak RSS stays bounded, a peer connection naming an unknown
// server id is refused, and each server logs that refusal once.
func TestPeerPortStorm(t *testing.T) {
	e := startEnsemble(t, 3, 0, nil)
	peers, elections := stormTargets(t, e)
	c := dial(t, e.Addrs(), 6*time.Second)
	const root = "/storm"
	if _, err := c.Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var w writer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.run(c, 0, root, stop) }()
	var st storm
	for i, addr := range append(append([]string{}, peers...), elections...) {
		for g := range 3 {
			wg.Add(1)
			rng := rand.New(rand.NewPCG(uint64(i), uint64(g)))
			go func() { defer wg.Done(); st.hit(addr, len(peers), stop, rng) }()
		}
	}
	const stormFor = 10 * time.Second
	began := time.Now()
	time.Sleep(stormFor)

	// Under the storm: a connection naming an unknown id is refused.
	for _, addr := range peers {
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatalf("peer port %s under the storm: %v", addr, err)
		}
		nc.Write(peerHello(77))
		if !refusedByServer(nc, 10*time.Second) {
			t.Errorf("peer port %s kept a connection naming server id 77", addr)
		}
		nc.Close()
	}
	close(stop)
	wg.Wait()

	w.mu.Lock()
	acked := len(w.acked)
	var slowest time.Duration
	for _, x := range w.times {
		slowest = max(slowest, x[1].Sub(x[0]))
	}
	w.mu.Unlock()
	t.Logf("storm: %d connections, %d refused by the kernel (election ports), %v; %d writes acknowledged, slowest %v",
		st.conns.Load(), st.refused.Load(), time.Since(began).Round(time.Millisecond), acked, slowest)
	if acked < 20 {
		t.Fatalf("only %d writes committed during the storm (%s)", acked, modes(e))
	}
	if slowest > 6*time.Second {
		t.Errorf("a write took %v under the storm", slowest)
	}
	if _, err := c.Create(root+"/after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("write after the storm: %v", err)
	}
	agree(t, e, root)

	for _, s := range e.Servers {
		if !s.Running() {
			t.Fatalf("server %d died in the storm", s.ID())
		}
		rss, err := peakRSS(s.Pid())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("server %d: peak RSS %d MiB", s.ID(), rss>>20)
		if rss > maxStormRSS {
			t.Errorf("server %d: peak RSS %d MiB, over %d MiB", s.ID(), rss>>20, maxStormRSS>>20)
		}
		logText, _ := os.ReadFile(s.LogPath())
		if s.ID() == 1 {
			for _, l := range strings.Split(string(logText), "\n") {
				if strings.Contains(l, "peer port") || strings.Contains(l, "accept failed") {
					t.Logf("server 1 log: %s", l)
				}
			}
		}
		if n := strings.Count(string(logText), "not a peer in server.N"); n != 1 {
			t.Errorf("server %d logged %d refusals of unknown ids, want 1 (then counted)", s.ID(), n)
		}
	}
}
