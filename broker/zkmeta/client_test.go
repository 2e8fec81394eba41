package zkmeta

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/faultproxy"
	"github.com/zkafka/zkafka/internal/zktest"
)

// TestEnsurePersistentRetriesLostConnection: a create whose connection is
// reset while it is in flight (go-zookeeper answers it ErrConnectionClosed,
// its outcome unknown) is sent again once the session has reconnected, as
// Kafka's ZooKeeper client retries on CONNECTIONLOSS; the node exists after.
func TestEnsurePersistentRetriesLostConnection(t *testing.T) {
	s := zktest.Start(t)
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
