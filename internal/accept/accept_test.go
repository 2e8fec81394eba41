package accept

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// fakeListener returns the queued results of Accept in order, then blocks
// until closed.
type fakeListener struct {
	results chan result
	closed  chan struct{}
}

type result struct {
	conn net.Conn
	err  error
}

func newFakeListener(rs ...result) *fakeListener {
	l := &fakeListener{results: make(chan result, len(rs)+64), closed: make(chan struct{})}
	for _, r := range rs {
		l.results <- r
	}
	return l
}

func (l *fakeListener) Accept() (net.Conn, error) {
	select {
	case r := <-l.results:
		return r.conn, r.err
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *fakeListener) Close() error   { close(l.closed); return nil }
func (l *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// acceptErr is an error shaped as net.Listener.Accept returns it.
func acceptErr(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestTemporary(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{acceptErr(syscall.EMFILE), true},
		{acceptErr(syscall.ENFILE), true},
		{acceptErr(syscall.ENOBUFS), true},
		{acceptErr(syscall.ENOMEM), true},
		{acceptErr(syscall.ECONNABORTED), true},
		{acceptErr(syscall.EPROTO), true},
		{fmt.Errorf("wrapped: %w", acceptErr(syscall.EMFILE)), true},
		{&net.OpError{Op: "accept", Err: timeoutErr{}}, true},
		{acceptErr(syscall.EBADF), false},
		{acceptErr(syscall.EINVAL), false},
		{net.ErrClosed, false},
		{errors.New("something else"), false},
	} {
		if got := Temporary(tc.err); got != tc.want {
			t.Errorf("Temporary(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestNextBackoffDoublesToTheCap(t *testing.T) {
	var d time.Duration
	var seen []time.Duration
	for range 12 {
		d = NextBackoff(d)
		seen = append(seen, d)
	}
	if seen[0] != MinBackoff || seen[1] != 2*MinBackoff || seen[len(seen)-1] != MaxBackoff {
		t.Fatalf("backoffs %v: want %v doubling to %v", seen, MinBackoff, MaxBackoff)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] || seen[i] > MaxBackoff {
			t.Fatalf("backoffs %v are not non-decreasing up to %v", seen, MaxBackoff)
		}
	}
}

// A listener out of descriptors (EMFILE, then ENFILE) keeps accepting once
// they are back: the connection after the errors is handled.
func TestLoopRetriesEMFILEThenAccepts(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	l := newFakeListener(result{err: acceptErr(syscall.EMFILE)}, result{err: acceptErr(syscall.ENFILE)},
		result{err: &net.OpError{Op: "accept", Err: timeoutErr{}}}, result{conn: server})
	done := make(chan struct{})
	handled := make(chan net.Conn, 1)
	ret := make(chan error, 1)
	go func() { ret <- Loop(l, done, nil, "test", func(c net.Conn) { handled <- c }) }()
	select {
	case c := <-handled:
		if c != server {
			t.Fatalf("handled %v, want the accepted conn", c)
		}
	case err := <-ret:
		t.Fatalf("Loop returned %v after a temporary error", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the connection after EMFILE was not handled")
	}
	close(done)
	l.Close()
	if err := <-ret; err != ErrClosed {
		t.Fatalf("Loop after done = %v, want ErrClosed", err)
	}
}

func TestLoopReturnsPermanentError(t *testing.T) {
	bad := acceptErr(syscall.EBADF)
	l := newFakeListener(result{err: bad})
	err := Loop(l, make(chan struct{}), nil, "test", func(net.Conn) { t.Error("nothing to handle") })
	if !errors.Is(err, syscall.EBADF) {
		t.Fatalf("Loop = %v, want EBADF", err)
	}
}

// Closing done while Loop waits out a backoff ends it at once, with
// ErrClosed, whatever the listener says.
func TestLoopStopsDuringBackoff(t *testing.T) {
	l := newFakeListener()
	for range 64 {
		l.results <- result{err: acceptErr(syscall.EMFILE)}
	}
	done := make(chan struct{})
	ret := make(chan error, 1)
	go func() { ret <- Loop(l, done, nil, "test", func(net.Conn) {}) }()
	close(done)
	select {
	case err := <-ret:
		if err != ErrClosed {
			t.Fatalf("Loop = %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Loop did not stop when done was closed")
	}
}

// After Shutdown closed done and the listener, the close error is not
// reported as a failure.
func TestLoopClosedListenerAfterDone(t *testing.T) {
	l := newFakeListener()
	done := make(chan struct{})
	close(done)
	l.Close()
	if err := Loop(l, done, nil, "test", func(net.Conn) {}); err != ErrClosed {
		t.Fatalf("Loop = %v, want ErrClosed", err)
	}
}
