package quorum

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
)

// verdict is what an instantLog does with a proposal.
type verdict int

const (
	applyNow    verdict = iota // applied at once, through the server's own apply
	holdForever                // never an outcome (no leader for writes)
	loseOutcome                // raftnode.ErrOutcomeUnknown (its leader died)
)

// instantLog is a replicator for one server whose log applies every
// proposal at once (fakelog_test.go is the scripted one for several). A
// test changes what it does through intercept, called under mu for each
// proposal (nil: applyNow), and readIndex (nil: caught up at once).
type instantLog struct {
	srv       *Server
	mu        sync.Mutex
	index     uint64
	intercept func(txn znode.Txn) verdict
	readIndex func(ctx context.Context) error
}

func (l *instantLog) ProposeAsync(data []byte) <-chan proposeResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(chan proposeResult, 1)
	if txn, err := znode.DecodeTxn(data); err == nil && l.intercept != nil {
		switch l.intercept(txn) {
		case holdForever:
			return out
		case loseOutcome:
			out <- proposeResult{err: raftnode.ErrOutcomeUnknown}
			return out
		}
	}
	l.index++
	out <- proposeResult{applied: l.srv.apply(l.index, data).(*appliedTxn)}
	return out
}

func (l *instantLog) ReadIndex(ctx context.Context) error {
	if l.readIndex == nil {
		return nil
	}
	return l.readIndex(ctx)
}

func (l *instantLog) Stop() error { return nil }

// waitForLeader is a readIndex without a leader: it waits, as raftnode's
// does, until its context ends.
func waitForLeader(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// newServerOver builds a server over log (not serving yet), with the given
// tickTime and ZooKeeper's default session timeout bounds; its warnings go
// to the test's log.
func newServerOver(t *testing.T, tick time.Duration, log *instantLog) *Server {
	t.Helper()
	cfg := DefaultConfig(t.TempDir())
	cfg.TickTime = tick
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 0, 0
	cfg.fillDerived()
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s := newServer(cfg, logger, znode.New(znode.Options{MaxDataBytes: cfg.JuteMaxBuffer}))
	log.srv, s.repl = s, log
	return s
}

// serveOn serves s on 127.0.0.1:0 until the test ends.
func serveOn(t *testing.T, s *Server) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.clientAddr = l.Addr()
	s.goTracked("zk-listener", func() { s.Serve(l) })
	t.Cleanup(func() { s.Close() })
	return s
}

// testWriter sends a logger's lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}
