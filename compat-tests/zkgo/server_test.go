package zkgo

import (
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/quorum"
)

// testServer is an in-process zkafka ZooKeeper server on 127.0.0.1.
type testServer struct {
	t    *testing.T
	cfg  quorum.Config
	srv  *quorum.Server
	addr string
}

// startServer starts a standalone server with a short tickTime so that
// session expiry happens within a test.
func startServer(t *testing.T, edit ...func(*quorum.Config)) *testServer {
	t.Helper()
	cfg := quorum.DefaultConfig(t.TempDir())
	cfg.TickTime = 100 * time.Millisecond
	cfg.MinSessionTimeout = 0
	cfg.MaxSessionTimeout = 0
	cfg.ClientPort = 0
	cfg.FourLetterWords = map[string]bool{}
	for _, w := range []string{"ruok", "srvr", "stat", "mntr", "conf", "cons", "envi", "dirs", "wchs", "wchc", "wchp", "dump", "isro", "srst", "crst"} {
		cfg.FourLetterWords[w] = true
	}
	for _, e := range edit {
		e(&cfg)
	}
	ts := &testServer{t: t, cfg: cfg}
	ts.start("127.0.0.1:0")
	t.Cleanup(func() { ts.stop() })
	return ts
}

func (ts *testServer) start(addr string) {
	ts.t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		ts.t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := quorum.StartWithListener(ts.cfg, log, l)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.srv, ts.addr = srv, l.Addr().String()
}

func (ts *testServer) stop() {
	if ts.srv != nil {
		ts.srv.Close()
		ts.srv = nil
	}
}

// restart stops the server and starts it again on the same address and data.
func (ts *testServer) restart() {
	ts.t.Helper()
	ts.stop()
	ts.start(ts.addr)
}

// connect opens a go-zookeeper session and waits until it is connected.
func (ts *testServer) connect(timeout time.Duration) (*zk.Conn, <-chan zk.Event) {
	ts.t.Helper()
	c, events, err := zk.Connect([]string{ts.addr}, timeout, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(c.Close)
	waitState(ts.t, events, zk.StateHasSession)
	return c, events
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// waitState waits for a session state event, bounded in time.
func waitState(t *testing.T, events <-chan zk.Event, want zk.State) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v event within 10s", want)
		}
	}
}

// waitEvent waits for one watch event, bounded in time.
func waitEvent(t *testing.T, ch <-chan zk.Event) zk.Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return zk.Event{}
}

// checkFor polls cond until it holds or the bound passes.
func checkFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within %v", what, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
