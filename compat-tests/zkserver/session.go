package zkserver

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// QuietLogger is a go-zookeeper logger that prints nothing.
var QuietLogger zk.Logger = quietZK{}

type quietZK struct{}

func (quietZK) Printf(string, ...any) {}

// Session is a go-zookeeper session on addr, over TLS with tc when tc is
// set, returned once the server has given it a session (30 s at most);
// it is closed when t ends.
func Session(t testing.TB, addr string, tc *tls.Config) *zk.Conn {
	t.Helper()
	dial := zk.Dialer(net.DialTimeout)
	if tc != nil {
		dial = func(network, a string, timeout time.Duration) (net.Conn, error) {
			return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, a, tc)
		}
	}
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithDialer(dial), zk.WithLogger(quietZK{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return c
			}
		case <-deadline:
			t.Fatalf("no session on %s", addr)
		}
	}
}

// FreePort is a TCP port on 127.0.0.1 free when asked, for a server's
// secureClientPort.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
