//go:build compat

package zkserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestApacheLifecycle starts, restarts and kills Apache ZooKeeper, checking
// that data survives a restart on the same address.
func TestApacheLifecycle(t *testing.T) {
	s := zkserver.StartApache(t, zkserver.Options{ExtendedTypes: true, ContainerCheckInterval: time.Second})
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr = %q, want 127.0.0.1:port", s.Addr())
	}
	out, err := zkserver.FourLetterWord(s.Addr(), "srvr", 2*time.Second)
	if err != nil || !strings.Contains(out, "Mode: standalone") {
		t.Fatalf("srvr = %q, %v", out, err)
	}
	c := connect(t, s.Addr())
	if _, err := c.Create("/persist", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()

	s.Restart()
	c2 := connect(t, s.Addr())
	data, _, err := c2.Get("/persist")
	if err != nil || string(data) != "x" {
		t.Fatalf("after restart Get(/persist) = %q, %v", data, err)
	}
	c2.Close()

	s.Kill()
	if s.Running() {
		t.Fatal("still running after Kill")
	}
	if _, err := zkserver.FourLetterWord(s.Addr(), "ruok", 500*time.Millisecond); err == nil {
		t.Fatal("ruok answered after Kill")
	}
}

// TestApacheWhitelistWithoutRuok uses the srvr readiness probe, and a
// whitelist with neither ruok nor srvr the session handshake.
func TestApacheWhitelistWithoutRuok(t *testing.T) {
	s := zkserver.StartApache(t, zkserver.Options{FourLetterWords: []string{"srvr"}})
	if out, _ := zkserver.FourLetterWord(s.Addr(), "ruok", 2*time.Second); out == "imok" {
		t.Fatalf("ruok answered %q although it is not whitelisted", out)
	}
	s2 := zkserver.StartApache(t, zkserver.Options{FourLetterWords: []string{"conf"}, TickTime: 500 * time.Millisecond})
	out, err := zkserver.FourLetterWord(s2.Addr(), "conf", 2*time.Second)
	if err != nil || !strings.Contains(out, "tickTime=500") {
		t.Fatalf("conf = %q, %v", out, err)
	}
}
