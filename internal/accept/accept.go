package accept

import (
	"errors"
	"log/slog"
	"net"
	"syscall"
	"time"
)

// ErrClosed is what Loop returns once done is closed: the server shut the
// listener down on purpose. Callers map it to their own ErrServerClosed.
var ErrClosed = errors.New("accept: server closed")

// Backoff bounds: the first retry waits MinBackoff, each further one twice
// as long, at most MaxBackoff.
const (
	MinBackoff = 5 * time.Millisecond
	MaxBackoff = time.Second
)

// temporaryErrnos are the accept errors that go away by themselves.
var temporaryErrnos = []syscall.Errno{
	syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
	syscall.ECONNABORTED, syscall.ECONNRESET,
	syscall.ENETDOWN, syscall.EPROTO, syscall.ENOPROTOOPT, syscall.EHOSTDOWN,
	syscall.EHOSTUNREACH, syscall.EOPNOTSUPP, syscall.ENETUNREACH,
}

// Temporary reports whether an accept error is worth retrying: the
// listener will accept again once the condition passes.
func Temporary(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range temporaryErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// NextBackoff is the wait after one more failure, given the previous wait
// (0 after a success).
func NextBackoff(prev time.Duration) time.Duration {
	return min(max(2*prev, MinBackoff), MaxBackoff)
}

// Loop accepts connections on l and passes each to handle, until done is
// closed (it returns ErrClosed) or Accept fails with an error that is not
// Temporary (it returns that error). handle runs on Loop's goroutine: it
// should start the connection's own goroutine and return. Temporary errors
// are logged on log (with name, to tell the listeners apart) and retried
// after a backoff; closing done also ends a backoff wait at once. Loop does
// not close l: whoever closes done closes l too, which ends a blocked
// Accept.
func Loop(l net.Listener, done <-chan struct{}, log *slog.Logger, name string, handle func(net.Conn)) error {
	var backoff time.Duration
	var wait *time.Timer
	for {
		nc, err := l.Accept()
		if err == nil {
			backoff = 0
			handle(nc)
			continue
		}
		select {
		case <-done:
			return ErrClosed
		default:
		}
		if !Temporary(err) {
			return err
		}
		backoff = NextBackoff(backoff)
		if log != nil {
			log.Warn("accept failed; retrying", "listener", name, "err", err, "backoff", backoff)
		}
		if wait == nil {
			wait = time.NewTimer(backoff)
		} else {
			wait.Reset(backoff)
		}
		select {
		case <-done:
			wait.Stop()
			return ErrClosed
		case <-wait.C:
		}
	}
}
