package zkafkatest_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestCutFollowerFromLeader: with the link between a follower and its
// leader cut (both still reach ZooKeeper and the clients), the follower
// leaves the ISR after replica.lag.time.max.ms and rejoins once healed,
// while a producer with acks=all keeps being acked throughout.
func TestCutFollowerFromLeader(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(3), zkafkatest.Topic("t", 1, 3),
		zkafkatest.BrokerConfig("replica.lag.time.max.ms", "1500"))
	// The leader is the controller: its AlterPartition goes to itself,
	// not over the cut.
	ctrl, err := cl.Controller()
	must(t, err)
	must(t, cl.MoveLeader("t", 0, ctrl))
	follower := int32(1 + ctrl%3)
	c := client(t, cl, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(60*time.Second))
	var acked atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a bounded producer: at most 5000 records, one at a time
		defer close(done)
		for i := 0; i < 5000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r := &kgo.Record{Topic: "t", Value: []byte(fmt.Sprint("r", i))}
			if c.ProduceSync(ctx(t, 60*time.Second), r).FirstErr() == nil {
				acked.Add(1)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	defer func() { close(stop); <-done }()
	isrHas := func(want bool) func() error {
		return func() error {
			isr, err := cl.ISR("t", 0)
			if err != nil {
				return err
			}
			if slices.Contains(isr, follower) != want {
				return fmt.Errorf("ISR %v, broker %d in it: %v", isr, follower, !want)
			}
			return nil
		}
	}
	must(t, poll(t, 30*time.Second, isrHas(true)))
	must(t, cl.Cut(zkafkatest.Broker(follower), zkafkatest.Broker(ctrl)))
	must(t, poll(t, 30*time.Second, isrHas(false)))
	// Both still reach ZooKeeper and their clients.
	for _, id := range []int32{follower, ctrl} {
		if !registered(t, cl, id) {
			t.Fatalf("broker %d lost its registration over the cut", id)
		}
		addr, err := cl.Addr(zkafkatest.Broker(id))
		must(t, err)
		one := client(t, cl, kgo.SeedBrokers(addr))
		if _, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx(t, 10*time.Second), one); err != nil {
			t.Fatalf("a client of broker %d over the cut: %v", id, err)
		}
	}
	before := acked.Load()
	must(t, poll(t, 30*time.Second, func() error {
		if acked.Load() < before+20 {
			return fmt.Errorf("%d records acked since the follower left the ISR", acked.Load()-before)
		}
		return nil
	}))
	must(t, cl.Heal(zkafkatest.Broker(follower), zkafkatest.Broker(ctrl)))
	must(t, poll(t, 30*time.Second, isrHas(true)))
	if acked.Load() == 0 {
		t.Fatal("no record acked")
	}
}

// registered reports whether broker id has its /brokers/ids znode.
func registered(t *testing.T, cl *zkafkatest.Cluster, id int32) bool {
	conn, _ := zkSession(t, cl, 10*time.Second)
	ok, _, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", id))
	must(t, err)
	return ok
}
