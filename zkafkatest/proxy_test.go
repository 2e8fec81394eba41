package zkafkatest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// echoServer echoes every line on 127.0.0.1 until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return l.Addr().String()
}

// roundTrip writes line on c and reads it back within limit.
func roundTrip(c net.Conn, line string, limit time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(limit))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return got, err
}

// TestLink: a link forwards; paused, it holds the bytes (the client's read
// times out) and delivers them on resume; cut, it resets its connections
// and new ones; without a target it resets new connections.
func TestLink(t *testing.T) {
	k, err := newLink(Clients, Broker(1), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer k.close()
	k.setTarget(echoServer(t))
	c, err := net.Dial("tcp", k.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c, "one", 10*time.Second); err != nil || got != "one\n" {
		t.Fatalf("open: %q %v", got, err)
	}

	k.setPaused(true)
	if k.state() != "paused" {
		t.Fatalf("state %s", k.state())
	}
	c.SetDeadline(time.Now().Add(300 * time.Millisecond))
	io.WriteString(c, "two\n")
	var buf [16]byte
	if n, err := c.Read(buf[:]); !isTimeout(err) {
		t.Fatalf("paused: read %q %v, want a timeout", buf[:n], err)
	}
	k.setPaused(false)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if got, err := bufio.NewReader(c).ReadString('\n'); err != nil || got != "two\n" {
		t.Fatalf("resumed: %q %v, want the held bytes", got, err)
	}

	k.setCut(true)
	if _, err := roundTrip(c, "three", 10*time.Second); !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("cut: %v, want a reset", err)
	}
	if err := dialAndRead(k.addr()); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("a new connection through a cut: %v, want a reset", err)
	}
	k.setCut(false)
	k.setTarget("")
	if err := dialAndRead(k.addr()); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("a new connection to a member that is down: %v, want a reset", err)
	}
}

// dialAndRead connects and reads once, returning the read's error.
func dialAndRead(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = c.Read(make([]byte, 1))
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestLinkStatesCount: Links reports each link's open connections.
func TestLinkStatesCount(t *testing.T) {
	n := newNetwork()
	defer n.close()
	k, err := n.add(Clients, Broker(1), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k.setTarget(echoServer(t))
	c, err := net.Dial("tcp", k.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, "one", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if st := n.states(); len(st) != 1 || st[0].Open != 1 || st[0].State != "open" {
		t.Fatalf("states %+v, want one open link with one connection", st)
	}
}
