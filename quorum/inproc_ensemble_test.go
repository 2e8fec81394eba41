package quorum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// inprocEnsemble is an in-process ensemble on 127.0.0.1; each server's
// log goes to a reapLog.
type inprocEnsemble struct {
	servers []*Server
	logs    []*reapLog
	stopped []bool
}

// startInprocEnsemble starts one server per entry of observers (true: an
// observer), with myids 1, 2, ...; opts[i], if there is one, are server
// i's start options.
func startInprocEnsemble(t *testing.T, observers []bool, opts ...startOptions) *inprocEnsemble {
	t.Helper()
	// The peer ports are picked free and then bound by the servers; a test
	// in another package may take one in between, so a start that meets a
	// port in use is tried again with new ports.
	for attempt := 1; ; attempt++ {
		ens, err := tryInprocEnsemble(t, observers, opts)
		if err == nil {
			return ens
		}
		if !errors.Is(err, syscall.EADDRINUSE) || attempt == 5 {
			t.Fatal(err)
		}
	}
}

func tryInprocEnsemble(t *testing.T, observers []bool, opts []startOptions) (*inprocEnsemble, error) {
	t.Helper()
	specs := make([]ServerSpec, len(observers))
	for i, obs := range observers {
		specs[i] = ServerSpec{ID: uint64(i + 1), Host: "127.0.0.1", PeerPort: inprocFreePort(t), Observer: obs}
	}
	ens := &inprocEnsemble{stopped: make([]bool, len(observers))}
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
		var o startOptions
		if i < len(opts) {
			o = opts[i]
		}
		s, err := start(cfg, slog.New(rl), l, o)
		if err != nil {
			l.Close()
			for _, started := range ens.servers {
				started.Close()
			}
			return nil, fmt.Errorf("server %d: %w", i+1, err)
		}
		t.Cleanup(func() { s.Close() })
		ens.servers = append(ens.servers, s)
		ens.logs = append(ens.logs, rl)
	}
	return ens, nil
}

// waitLeader waits until the running servers agree on a leader, and keep
// agreeing for a second (well past the two election timeouts, 0.1 s here,
// within which raftnode's hand-over may move the leadership), and returns
// its index.
func (e *inprocEnsemble) waitLeader(t *testing.T) int {
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
func (e *inprocEnsemble) agreedLeader() int {
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

func inprocFreePort(t *testing.T) int {
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
