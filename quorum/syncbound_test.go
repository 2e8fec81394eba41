package quorum

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// startLeaderless serves a server whose log has no leader for reads:
// proposals apply at once (so sessions can be made), but ReadIndex, like
// raftnode's with no leader known, waits until its context ends. reads
// yields a value for each ReadIndex started.
func startLeaderless(t *testing.T, tick time.Duration) (s *Server, log *instantLog, reads <-chan struct{}) {
	t.Helper()
	started := make(chan struct{}, 16)
	log = &instantLog{readIndex: func(ctx context.Context) error {
		select {
		case started <- struct{}{}:
		default:
		}
		return waitForLeader(ctx)
	}}
	return serveOn(t, newServerOver(t, tick, log)), log, started
}

type silentZK struct{}

func (silentZK) Printf(string, ...any) {}

// dialCapture opens a go-zookeeper session on addr and returns the client
// and its current TCP connection (for the test to cut).
func dialCapture(t *testing.T, addr string, timeout time.Duration) (*zk.Conn, func() net.Conn) {
	t.Helper()
	var mu sync.Mutex
	var cur net.Conn
	dialer := func(network, a string, d time.Duration) (net.Conn, error) {
		nc, err := net.DialTimeout(network, a, d)
		mu.Lock()
		cur = nc
		mu.Unlock()
		return nc, err
	}
	c, events, err := zk.Connect([]string{addr}, timeout, zk.WithDialer(dialer), zk.WithLogger(silentZK{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go func() {
					for range events {
					}
				}()
				return c, func() net.Conn { mu.Lock(); defer mu.Unlock(); return cur }
			}
		case <-deadline:
			t.Fatal("no session within 10s")
		}
	}
}

// startSync sends a sync and waits until the server is waiting for the
// leader on its behalf; the returned channel yields the sync's error.
func startSync(t *testing.T, c *zk.Conn, reads <-chan struct{}) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Sync("/")
		done <- err
	}()
	select {
	case <-reads:
	case err := <-done:
		t.Fatalf("sync answered without a leader: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the sync did not reach ReadIndex within 10s")
	}
	return done
}

// TestSyncWithoutLeaderEndsWithItsConnection: a sync waiting for a leader
// that does not come must not keep its connection alive once the client
// has gone, nor hold up Shutdown until its timeout. The session timeout is
// long (40 s), so only the connection's end can release the wait.
func TestSyncWithoutLeaderEndsWithItsConnection(t *testing.T) {
	s, _, reads := startLeaderless(t, 2*time.Second)
	c, nc := dialCapture(t, s.Addr().String(), 40*time.Second)
	startSync(t, c, reads)
	c.Close()
	nc().Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.connections()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the connection of a closed client is still open 10s later (its sync waits for a leader)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestShutdownDoesNotWaitForALeaderlessSync: Shutdown with a sync still
// waiting for a leader returns without waiting out its context.
func TestShutdownDoesNotWaitForALeaderlessSync(t *testing.T) {
	s, _, reads := startLeaderless(t, 2*time.Second)
	c, _ := dialCapture(t, s.Addr().String(), 40*time.Second)
	done := startSync(t, c, reads)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a sync outstanding: %v", err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the sync succeeded without a leader")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the client's sync did not end after Shutdown")
	}
}

// TestSyncWithoutLeaderEndsWithinTheSessionTimeout: with the client still
// there and silent (a raw connection: no pings, which would make the
// client give up first), a sync that finds no leader ends within the
// session timeout: the connection closes, so the client sees connection
// loss and can try another server, instead of waiting forever.
func TestSyncWithoutLeaderEndsWithinTheSessionTimeout(t *testing.T) {
	s, _, reads := startLeaderless(t, 100*time.Millisecond)
	nc, br := rawSession(t, s, 1000)
	sync := zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: 1, Type: zkproto.OpSync}, &zkproto.SyncRequest{Path: "/"})
	if _, err := nc.Write(sync); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reads:
	case <-time.After(10 * time.Second):
		t.Fatal("the sync did not reach ReadIndex within 10s")
	}
	expectClosedUnanswered(t, br, "the sync", "a sync without a leader")
}

// rawSession opens a session of timeout ms on s over a raw connection (no
// pings), with a 15 s deadline for everything that follows.
func rawSession(t *testing.T, s *Server, timeout int32) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	br := bufio.NewReader(nc)
	nc.SetDeadline(time.Now().Add(15 * time.Second))
	if _, err := nc.Write(zkproto.AppendFrame(nil, &zkproto.ConnectRequest{TimeOut: timeout, Passwd: make([]byte, 16)})); err != nil {
		t.Fatal(err)
	}
	frame, err := zkproto.ReadFrame(br, nil, 1<<20)
	if err != nil {
		t.Fatalf("connect response: %v", err)
	}
	var resp zkproto.ConnectResponse
	resp.Decode(zkproto.NewReader(frame))
	if resp.SessionID == 0 || resp.TimeOut != timeout {
		t.Fatalf("connect response %+v, want a session with timeout %d", resp, timeout)
	}
	return nc, br
}

// TestWriteWithoutOutcomeEndsWithinTheSessionTimeout: a write that gets
// no outcome (no leader) does not hold its connection forever: it closes
// within the session timeout, and the client, which cannot know whether
// the write happened, sees connection loss.
func TestWriteWithoutOutcomeEndsWithinTheSessionTimeout(t *testing.T) {
	s, log, _ := startLeaderless(t, 100*time.Millisecond)
	log.mu.Lock()
	log.intercept = func(txn znode.Txn) verdict { // no leader for writes either
		if txn.Ops[0].Type == zkproto.OpCreateSession {
			return applyNow
		}
		return holdForever
	}
	log.mu.Unlock()
	nc, br := rawSession(t, s, 1000)
	create := zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: 1, Type: zkproto.OpCreate},
		&zkproto.CreateRequest{Path: "/x", ACL: zkproto.OpenACLUnsafe})
	if _, err := nc.Write(create); err != nil {
		t.Fatal(err)
	}
	expectClosedUnanswered(t, br, "the create", "a write without an outcome")
}

// expectClosedUnanswered reads replies until the server closes the
// connection; request xid 1 (what) must not succeed, and the close must
// come before the raw session's read deadline (who is what waited).
func expectClosedUnanswered(t *testing.T, br *bufio.Reader, what, who string) {
	t.Helper()
	start := time.Now()
	for {
		frame, err := zkproto.ReadFrame(br, nil, 1<<20)
		if err == nil {
			var h zkproto.ReplyHeader
			h.Decode(zkproto.NewReader(frame))
			if h.Xid == 1 && h.Err == zkproto.ErrOK {
				t.Fatalf("%s succeeded with nobody to decide it", what)
			}
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s still holds its connection %v later (session timeout 1s)", who, time.Since(start).Round(time.Second))
		}
		return // closed by the server
	}
}
