package quorum

import (
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/faultfs"
)

// TestLogFailureFailStops: when an fsync of the raft log fails, the server
// stops serving instead of answering from a tree that no longer follows
// the log: the clients' connections are closed, the listener refuses new
// ones (no session is resumed and served stale reads), and Failed yields
// the storage error.
func TestLogFailureFailStops(t *testing.T) {
	fs := faultfs.New()
	s := failstopServer(t, startOptions{logFS: fs})
	addr := s.Addr().String()
	writer, writerEvents := failstopClient(t, addr)
	reader, readerEvents := failstopClient(t, addr)
	if _, err := writer.Create("/before", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create before the fault: %v", err)
	}
	if _, _, err := reader.Get("/before"); err != nil {
		t.Fatalf("read before the fault: %v", err)
	}
	select {
	case err := <-s.Failed():
		t.Fatalf("Failed yielded before the fault: %v", err)
	default:
	}

	fs.FailSyncsAfter(0)
	if _, err := writer.Create("/after", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err == nil {
		t.Fatal("a create whose fsync failed succeeded")
	}
	for name, events := range map[string]<-chan zk.Event{"writer": writerEvents, "reader": readerEvents} {
		if !failstopDisconnected(events, 30*time.Second) {
			t.Errorf("the %s's connection was not closed after the log failed", name)
		}
	}
	failstopCheckFor(t, 30*time.Second, "the listener to refuse connections", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	select {
	case err := <-s.Failed():
		if !errors.Is(err, faultfs.ErrInjected) {
			t.Fatalf("Failed yielded %v, want the injected fsync error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Failed did not yield after the log failed")
	}
	if n := len(s.connections()); n != 0 {
		t.Fatalf("%d client connections still open", n)
	}
}

// TestShutdownIsNotAFailure: a plain Shutdown does not yield on Failed.
func TestShutdownIsNotAFailure(t *testing.T) {
	s := failstopServer(t, startOptions{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.Failed():
		t.Fatalf("Failed yielded after Shutdown: %v", err)
	default:
	}
}

// failstopServer starts a standalone server on 127.0.0.1:0, closed at the
// end of the test.
func failstopServer(t *testing.T, opts startOptions) *Server {
	t.Helper()
	cfg := DefaultConfig(t.TempDir())
	cfg.TickTime = 200 * time.Millisecond
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := start(cfg, slog.New(slog.DiscardHandler), l, opts)
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// failstopClient connects a go-zookeeper client and waits for its session.
func failstopClient(t *testing.T, addr string) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogger(failstopQuiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for ev := range events {
		if ev.State == zk.StateHasSession {
			return c, events
		}
	}
	t.Fatal("the client's event channel closed before a session")
	return nil, nil
}

// failstopDisconnected waits for the client to report its connection lost.
func failstopDisconnected(events <-chan zk.Event, limit time.Duration) bool {
	deadline := time.After(limit)
	for {
		select {
		case ev, ok := <-events:
			if !ok || ev.State == zk.StateDisconnected {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// failstopCheckFor polls cond until it holds, failing the test after limit.
func failstopCheckFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// failstopQuiet discards the go-zookeeper client's log.
type failstopQuiet struct{}

func (failstopQuiet) Printf(string, ...any) {}

// TestEnsembleMemberFailStops: a follower of a three-server ensemble whose
// raft log fails stops serving (its clients are cut off, its listener
// closed, Failed yields the cause) while the other two go on taking
// writes.
func TestEnsembleMemberFailStops(t *testing.T) {
	fss := []*faultfs.FS{faultfs.New(), faultfs.New(), faultfs.New()}
	ens := startInprocEnsemble(t, []bool{false, false, false},
		startOptions{logFS: fss[0]}, startOptions{logFS: fss[1]}, startOptions{logFS: fss[2]})
	leader := ens.waitLeader(t)
	// A follower fails, so that the other two keep a quorum and the write
	// that fails its log succeeds.
	f, healthy := (leader+1)%3, (leader+2)%3
	fs, failing := fss[f], ens.servers[f]
	c, events := failstopClient(t, failing.Addr().String())
	other, _ := failstopClient(t, ens.servers[healthy].Addr().String())
	if _, err := other.Create("/before", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	failstopCheckFor(t, 30*time.Second, "/before on the follower", func() bool {
		ok, _, err := c.Exists("/before")
		return err == nil && ok
	})

	fs.FailSyncsAfter(0)
	// A follower fsyncs every entry it appends: the next write fails its
	// log.
	if _, err := other.Create("/after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("a write on a healthy server failed: %v", err)
	}
	select {
	case err := <-failing.Failed():
		if !errors.Is(err, faultfs.ErrInjected) {
			t.Fatalf("Failed yielded %v, want the injected fsync error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Failed did not yield after the log failed")
	}
	if !failstopDisconnected(events, 30*time.Second) {
		t.Error("the failed server's client was not disconnected")
	}
	if conn, err := net.DialTimeout("tcp", failing.Addr().String(), time.Second); err == nil {
		conn.Close()
		t.Error("the failed server still accepts connections")
	}
	ens.stopped[f] = true
	ens.waitLeader(t)
	if _, err := other.Create("/later", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("the two healthy servers do not take writes: %v", err)
	}
}
