package zkmeta

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/faultproxy"
	"github.com/zkafka/zkafka/quorum"
)

// TestEnsurePersistentRetriesLostConnection: a create whose connection is
// reset while it is in flight (go-zookeeper answers it ErrConnectionClosed,
// its outcome unknown) is sent again once the session has reconnected, as
// Kafka's ZooKeeper client retries on CONNECTIONLOSS; the node exists after.
func TestEnsurePersistentRetriesLostConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := quorum.StartWithListener(quorum.DefaultConfig(t.TempDir()), slog.New(slog.DiscardHandler), l)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := faultproxy.New(s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	z, err := Dial(context.Background(), p.Addr(), 10*time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Conn.Close()

	p.Cut(faultproxy.Blackhole) // the create stays in flight
	done := make(chan error, 1)
	go func() { done <- z.EnsurePersistent("/config") }()
	time.Sleep(200 * time.Millisecond)
	p.Cut(faultproxy.Refuse) // resets it; reconnects fail for a while
	time.Sleep(300 * time.Millisecond)
	p.Heal()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("EnsurePersistent: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("EnsurePersistent did not return in 15 s")
	}
	if ok, err := z.Exists("/config"); err != nil || !ok {
		t.Fatalf("/config exists %v, %v", ok, err)
	}
}
