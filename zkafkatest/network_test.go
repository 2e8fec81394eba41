package zkafkatest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestPauseBroker: a paused broker answers nothing: a franz-go request
// times out at its deadline, a produce at its delivery timeout; resumed,
// the held bytes flow on and requests succeed.
func TestPauseBroker(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1))
	// A record in flight is failed only once its request timed out, and
	// an idempotent one not even then (its sequence must stay whole).
	c := client(t, cl, kgo.RecordDeliveryTimeout(time.Second), kgo.DisableIdempotentWrite(),
		kgo.ProduceRequestTimeout(500*time.Millisecond), kgo.RequestTimeoutOverhead(500*time.Millisecond))
	adm := kadm.NewClient(c)
	produce(t, c, "t", "warm") // connections and metadata in place
	must(t, cl.Pause(zkafkatest.Broker(1)))
	short, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := adm.ListEndOffsets(short, "t")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ListOffsets to a paused broker: %v, want the context's deadline", err)
	}
	err = c.ProduceSync(ctx(t, 30*time.Second), &kgo.Record{Topic: "t", Value: []byte("paused")}).FirstErr()
	if !errors.Is(err, kgo.ErrRecordTimeout) {
		t.Fatalf("produce to a paused broker: %v, want the delivery timeout", err)
	}
	must(t, cl.Resume(zkafkatest.Broker(1)))
	offsets, err := adm.ListEndOffsets(ctx(t, 30*time.Second), "t")
	must(t, err)
	if o, _ := offsets.Lookup("t", 0); o.Err != nil {
		t.Fatalf("ListOffsets after Resume: %v", o.Err)
	}
	produce(t, c, "t", "resumed")
}

// TestCutClientsFromBroker: a cut refuses the client's connections (an
// error well before the deadline, not a hang); healed, requests succeed.
func TestCutClientsFromBroker(t *testing.T) {
	cl := zkafkatest.StartCluster(t)
	c := client(t, cl, kgo.RequestRetries(0), kgo.RetryTimeout(100*time.Millisecond))
	// ListGroups: kgo answers a Metadata request from its cache.
	listGroups := func(ctx context.Context) error {
		_, err := c.Request(ctx, kmsg.NewPtrListGroupsRequest())
		return err
	}
	must(t, listGroups(ctx(t, 10*time.Second)))
	must(t, cl.Cut(zkafkatest.Clients, zkafkatest.Broker(1)))
	start := time.Now()
	long, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	err := listGroups(long)
	cancel()
	if err == nil || time.Since(start) > 15*time.Second {
		t.Fatalf("ListGroups through a cut: %v after %v, want a connection error", err, time.Since(start))
	}
	must(t, cl.Heal(zkafkatest.Clients, zkafkatest.Broker(1)))
	must(t, poll(t, 20*time.Second, func() error { return listGroups(ctx(t, 5*time.Second)) }))
}

// TestCutZooKeeperPeers: a server cut from both its peers loses the
// quorum and closes its clients, which move to the majority and write
// there; healed, it catches up.
func TestCutZooKeeperPeers(t *testing.T) {
	cl := zkafkatest.StartZooKeeper(t, zkafkatest.Ensemble(3))
	conn, events := zkSession(t, cl, 10*time.Second)
	lone := memberAt(t, cl, conn.Server())
	for id := int32(1); id <= 3; id++ {
		if m := zkafkatest.ZooKeeperServer(id); m != lone {
			must(t, cl.Cut(lone, m))
		}
	}
	waitState(t, events, zk.StateDisconnected)
	waitState(t, events, zk.StateHasSession)
	if now := memberAt(t, cl, conn.Server()); now == lone {
		t.Fatalf("the client stayed on %s, cut from the quorum", lone)
	}
	create(t, conn, "/written-in-the-majority")
	cl.HealAll()
	addr, err := cl.Addr(lone)
	must(t, err)
	only, onlyEvents, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	must(t, err)
	defer only.Close()
	waitState(t, onlyEvents, zk.StateHasSession)
	_, err = only.Sync("/")
	must(t, err)
	if ok, _, err := only.Exists("/written-in-the-majority"); err != nil || !ok {
		t.Fatalf("healed %s: exists=%v err=%v", lone, ok, err)
	}
}

// poll calls f until it returns nil or limit passes.
func poll(t testing.TB, limit time.Duration, f func() error) error {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPauseZooKeeperServer: a go-zookeeper client whose server is paused
// gets no answer to its pings, gives up on the connection and moves to
// another server of the ensemble, keeping its session; resumed, the paused
// server serves again.
func TestPauseZooKeeperServer(t *testing.T) {
	cl := zkafkatest.StartZooKeeper(t, zkafkatest.Ensemble(3))
	// The client notices at 2/3 of its timeout and must find the new
	// leader (if the paused server led) before the session expires.
	conn, events := zkSession(t, cl, 8*time.Second)
	sid := conn.SessionID()
	paused := memberAt(t, cl, conn.Server())
	must(t, cl.Pause(paused))
	waitState(t, events, zk.StateDisconnected)
	waitState(t, events, zk.StateHasSession)
	if conn.SessionID() != sid || memberAt(t, cl, conn.Server()) == paused {
		t.Fatalf("after the pause: session 0x%x on %s, want 0x%x elsewhere than %s", conn.SessionID(), conn.Server(), sid, paused)
	}
	create(t, conn, "/while-paused")
	must(t, cl.Resume(paused))
	addr, err := cl.Addr(paused)
	must(t, err)
	only, onlyEvents, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	must(t, err)
	defer only.Close()
	waitState(t, onlyEvents, zk.StateHasSession)
	_, err = only.Sync("/")
	must(t, err)
	if ok, _, err := only.Exists("/while-paused"); err != nil || !ok {
		t.Fatalf("resumed %s: exists=%v err=%v", paused, ok, err)
	}
}
