package kcluster

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/internal/faultproxy"
)

func TestMain(m *testing.M) { Main(m) }

// TestProcessControl: the harness starts ZooKeeper and three broker
// processes that register and elect a controller; SIGSTOP keeps the
// process but loses its registration after the session timeout and moves
// the controller; SIGKILL ends it; SIGTERM ends it cleanly; Restart brings
// each back on its data directory.
func TestProcessControl(t *testing.T) {
	c := Start(t, Options{})
	if got := c.Registered(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("registered %v, want [1 2 3]", got)
	}
	ctrl := c.Controller()
	epoch := c.ControllerEpoch()
	if ctrl < 1 || ctrl > 3 || epoch < 1 {
		t.Fatalf("controller %d epoch %d", ctrl, epoch)
	}

	c.Pause(ctrl)
	if s := c.ProcState(ctrl); s != "T" {
		t.Fatalf("paused broker %d in state %q, want T (stopped)", ctrl, s)
	}
	c.WaitFor("the paused controller's registration expired and another controller elected", 30*time.Second, func() bool {
		now := c.Controller()
		return !slices.Contains(c.Registered(), ctrl) && now > 0 && now != ctrl
	})
	if c.ControllerEpoch() <= epoch {
		t.Fatalf("controller epoch %d after failover, was %d", c.ControllerEpoch(), epoch)
	}
	c.Resume(ctrl)
	if s := c.ProcState(ctrl); s == "T" || s == "" {
		t.Fatalf("resumed broker %d in state %q", ctrl, s)
	}
	c.Kill9(ctrl)
	if c.Broker(ctrl).Running() {
		t.Fatal("killed broker still running")
	}
	c.Restart(ctrl)
	c.WaitFor("three brokers registered after the restart", 30*time.Second, func() bool {
		return len(c.Registered()) == 3
	})

	other := ctrl%3 + 1
	c.Term(other, 30*time.Second)
	if slices.Contains(c.Registered(), other) {
		t.Fatalf("broker %d still registered after a clean exit", other)
	}
	c.Restart(other)
	if got := c.Registered(); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Fatalf("registered %v after restarts", got)
	}
}

// TestTopicState: a created topic's state znodes name a leader among the
// brokers, and LedBy partitions them by leader.
func TestTopicState(t *testing.T) {
	c := Start(t, Options{})
	c.CreateTopic("state", 6, 3, nil)
	total := 0
	for id := int32(1); id <= 3; id++ {
		total += len(c.LedBy("state", 6, id))
	}
	if total != 6 {
		t.Fatalf("%d partitions led by brokers 1..3, want 6", total)
	}
	s, err := c.State("state", 0)
	if err != nil || s.LeaderEpoch < 0 || len(s.ISR) == 0 {
		t.Fatalf("state %+v, %v", s, err)
	}
}

// TestInterBrokerProxy: each broker registers its REPLICATION listener at
// its proxy's address; a Kafka client on that listener goes through the
// proxy, which knows it by client id, and a cut by client id prefix stops
// it while another client passes.
func TestInterBrokerProxy(t *testing.T) {
	c := Start(t, Options{})
	for _, b := range c.Brokers {
		eps, err := c.Endpoints(b.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"PLAINTEXT://" + b.Addr, "REPLICATION://" + b.Proxy.Addr()}
		if !slices.Equal(eps, want) {
			t.Fatalf("broker %d endpoints %v, want %v", b.ID, eps, want)
		}
	}
	b := c.Broker(2)
	ping := func(id string) error {
		cl := c.Client(kgo.SeedBrokers(b.Proxy.Addr()), kgo.ClientID(id), kgo.RequestRetries(0),
			kgo.RetryTimeout(time.Second), kgo.DialTimeout(time.Second))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		err := cl.Ping(ctx)
		cl.Close()
		return err
	}
	if err := ping("broker-3-fetcher-0"); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	if n := b.Proxy.Seen("broker-3-fetcher"); n == 0 {
		t.Fatalf("proxy did not see the client id; seen %v", b.Proxy.ClientIDs())
	}
	b.Proxy.CutClients("broker-3-fetcher", faultproxy.Refuse)
	if err := ping("broker-3-fetcher-1"); err == nil {
		t.Fatal("a cut client id reached the broker")
	}
	if err := ping("broker-1-fetcher-0"); err != nil {
		t.Fatalf("another client id was cut: %v", err)
	}
	b.Proxy.Heal()
	if err := ping("broker-3-fetcher-2"); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
}
