package quorum

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestOnlyTheLeaderReaps: in an ensemble of three participants and an
// observer, only the leader proposes the deletes of empty containers and
// expired TTL nodes (as ZooKeeper runs its ContainerManager on the leader
// only); after the leader stops, the new leader reaps.
//
// Every server sees a node become a candidate at the same moment (when the
// change that empties it is applied, or when its TTL runs out) and the first
// server to check proposes the delete: with several rounds, a follower or
// the observer would propose some of them if it reaped at all.
func TestOnlyTheLeaderReaps(t *testing.T) {
	ens := startReapEnsemble(t, []bool{false, false, false, true})
	leader := ens.waitLeader(t)
	c := reapClient(t, ens.servers[3].Addr().String()) // on the observer
	for i := range 6 {
		reapRound(t, c, fmt.Sprintf("/a%d", i))
	}
	ens.checkOnlyReaper(t, leader)

	ens.servers[leader].Close()
	ens.stopped[leader] = true
	next := ens.waitLeader(t)
	for _, l := range ens.logs {
		l.reset()
	}
	for i := range 6 {
		reapRound(t, c, fmt.Sprintf("/b%d", i))
	}
	ens.checkOnlyReaper(t, next)
}

// reapRound empties a container and creates a TTL node, and waits until
// both are reaped.
func reapRound(t *testing.T, c *zk.Conn, prefix string) {
	t.Helper()
	acl := zk.WorldACL(zk.PermAll)
	container, ttl := prefix+"-container", prefix+"-ttl"
	if _, err := c.CreateContainer(container, nil, zk.FlagContainer, acl); err != nil {
		t.Fatalf("create container %s: %v", container, err)
	}
	if _, err := c.Create(container+"/child", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(container+"/child", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTTL(ttl, nil, zk.FlagTTL, acl, time.Millisecond); err != nil {
		t.Fatalf("create TTL node %s: %v", ttl, err)
	}
	for _, p := range []string{container, ttl} {
		failstopCheckFor(t, 30*time.Second, p+" to be reaped", func() bool {
			ok, _, err := c.Exists(p)
			return err == nil && !ok
		})
	}
}

// reapEnsemble is an in-process ensemble on 127.0.0.1.
type reapEnsemble struct {
	servers []*Server
	logs    []*reapLog
	stopped []bool
}

// startReapEnsemble starts one server per entry of observers (true: an
// observer), with myids 1, 2, ...
func startReapEnsemble(t *testing.T, observers []bool) *reapEnsemble {
	t.Helper()
	specs := make([]ServerSpec, len(observers))
	for i, obs := range observers {
		specs[i] = ServerSpec{ID: uint64(i + 1), Host: "127.0.0.1", PeerPort: reapFreePort(t), Observer: obs}
	}
	ens := &reapEnsemble{stopped: make([]bool, len(observers))}
	root := t.TempDir()
	for i := range observers {
		cfg := DefaultConfig(filepath.Join(root, fmt.Sprint(i+1)))
		cfg.TickTime = 200 * time.Millisecond
		cfg.ContainerInterval = 20 * time.Millisecond
		cfg.ExtendedTypes = true
		cfg.MyID = uint64(i + 1)
		cfg.Servers = specs
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		rl := &reapLog{}
		s, err := StartWithListener(cfg, slog.New(rl), l)
		if err != nil {
			l.Close()
			t.Fatalf("server %d: %v", i+1, err)
		}
		t.Cleanup(func() { s.Close() })
		ens.servers = append(ens.servers, s)
		ens.logs = append(ens.logs, rl)
	}
	return ens
}

// waitLeader waits until the running servers agree on a leader, and keep
// agreeing for a second (well past the two election timeouts, 0.1 s here,
// within which raftnode's hand-over may move the leadership), and returns
// its index.
func (e *reapEnsemble) waitLeader(t *testing.T) int {
	t.Helper()
	leader, since := -1, time.Time{}
	failstopCheckFor(t, 30*time.Second, "a stable leader", func() bool {
		now := e.agreedLeader()
		if now != leader {
			leader, since = now, time.Now()
		}
		return leader >= 0 && time.Since(since) >= time.Second
	})
	return leader
}

// agreedLeader returns the index of the leader every running server
// knows, or -1.
func (e *reapEnsemble) agreedLeader() int {
	leader := -1
	for i, s := range e.servers {
		if e.stopped[i] {
			continue
		}
		id := int(s.ens.leader.Load()) - 1
		if id < 0 || (leader >= 0 && id != leader) {
			return -1
		}
		leader = id
	}
	if leader < 0 || e.stopped[leader] || !e.servers[leader].isLeader() {
		return -1
	}
	return leader
}

// checkOnlyReaper checks that server leader, and no other, proposed
// reaping deletes.
func (e *reapEnsemble) checkOnlyReaper(t *testing.T, leader int) {
	t.Helper()
	if now := e.agreedLeader(); now != leader {
		t.Fatalf("the leadership moved during the test (server %d, then %d)", leader+1, now+1)
	}
	for i, l := range e.logs {
		n := l.count()
		switch {
		case i == leader && n == 0:
			t.Errorf("the leader, server %d, proposed no reaping delete", i+1)
		case i != leader && n > 0:
			t.Errorf("server %d (not the leader, %d is) proposed %d reaping deletes: %v", i+1, leader+1, n, l.paths())
		}
	}
}

func reapClient(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, _ := failstopClient(t, addr)
	return c
}

func reapFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// reapLog is a slog.Handler that records the paths of the reaper's
// proposals and drops everything else.
type reapLog struct {
	mu     sync.Mutex
	reaped []string
}

func (h *reapLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *reapLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != reapLogMessage {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "path" {
			h.mu.Lock()
			h.reaped = append(h.reaped, a.Value.String())
			h.mu.Unlock()
		}
		return true
	})
	return nil
}

func (h *reapLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *reapLog) WithGroup(string) slog.Handler      { return h }

func (h *reapLog) count() int { h.mu.Lock(); defer h.mu.Unlock(); return len(h.reaped) }

func (h *reapLog) paths() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.reaped...)
}

func (h *reapLog) reset() { h.mu.Lock(); h.reaped = nil; h.mu.Unlock() }
