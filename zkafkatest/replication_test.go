package zkafkatest_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestKillLeaderLosesNoAckedRecord: in a 3-broker cluster, a partition
// with RF 3 and min.insync.replicas 2 keeps every record acked with
// acks=all through a kill of its leader in the middle of the writes, and
// the idempotent producer's retries land each record once.
func TestKillLeaderLosesNoAckedRecord(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(3), zkafkatest.Topic("t", 1, 3),
		zkafkatest.BrokerConfig("min.insync.replicas", "2"), zkafkatest.BrokerSessionTimeout(2*time.Second))
	leader, err := cl.Leader("t", 0)
	must(t, err)
	c := client(t, cl, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(60*time.Second))
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for i := range 200 {
		if i == 100 {
			must(t, cl.Kill(zkafkatest.Broker(leader)))
		}
		v := fmt.Sprint("r", i)
		wg.Add(1)
		c.Produce(ctx(t, 90*time.Second), &kgo.Record{Topic: "t", Value: []byte(v)}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err == nil {
				mu.Lock()
				acked = append(acked, v)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(acked) < 100 {
		t.Fatalf("only %d of 200 records acked through the failover", len(acked))
	}
	if now, err := cl.Leader("t", 0); err != nil || now == leader {
		t.Fatalf("leader after the kill: %d (%v), was %d", now, err, leader)
	}
	must(t, cl.StartMember(zkafkatest.Broker(leader)))
	got := consume(t, cl, "t", len(acked))
	for _, v := range acked {
		if n := count(got, v); n != 1 {
			t.Fatalf("acked record %s read %d times", v, n)
		}
	}
}

// TestCutLeaderFromZooKeeper: a leader cut from every ZooKeeper server
// loses its session; the controller moves the leadership, and the
// producer's records keep landing.
func TestCutLeaderFromZooKeeper(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(3), zkafkatest.Topic("t", 1, 3),
		zkafkatest.BrokerSessionTimeout(2*time.Second))
	leader, err := cl.Leader("t", 0)
	must(t, err)
	must(t, cl.Cut(zkafkatest.Broker(leader), zkafkatest.ZooKeeperServer(1)))
	must(t, poll(t, 60*time.Second, func() error {
		now, err := cl.Leader("t", 0)
		if err == nil && (now == leader || now < 0) {
			return errf("leader still %d", now)
		}
		return err
	}))
	c := client(t, cl, kgo.RequiredAcks(kgo.AllISRAcks()))
	produce(t, c, "t", "after the cut")
	cl.HealAll()
	if got := consume(t, cl, "t", 1); !slices.Equal(got, []string{"after the cut"}) {
		t.Fatalf("consumed %v", got)
	}
}

// TestKillIsNotControlled: a killed leader asks the controller for
// nothing (no controlled shutdown, no resignation): right after Kill the
// partition state still names it, until its session expires; a stopped
// one has its leadership moved before Stop returns.
func TestKillIsNotControlled(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(3), zkafkatest.Topic("t", 1, 3),
		zkafkatest.BrokerSessionTimeout(10*time.Second))
	leader, err := cl.Leader("t", 0)
	must(t, err)
	must(t, cl.Kill(zkafkatest.Broker(leader)))
	if now, err := cl.Leader("t", 0); err != nil || now != leader {
		t.Fatalf("right after killing leader %d the state names %d (%v): the kill was a controlled shutdown", leader, now, err)
	}
	must(t, poll(t, 60*time.Second, func() error {
		if now, err := cl.Leader("t", 0); err != nil || now == leader || now < 0 {
			return errf("leader %d (%v)", now, err)
		}
		return nil
	}))
	must(t, cl.StartMember(zkafkatest.Broker(leader)))
	now, err := cl.Leader("t", 0)
	must(t, err)
	must(t, cl.Stop(zkafkatest.Broker(now)))
	if after, err := cl.Leader("t", 0); err != nil || after == now {
		t.Fatalf("after stopping leader %d the state names %d (%v), want leadership moved by the controlled shutdown", now, after, err)
	}
}

// TestCutBrokersFromLeader: with the other brokers cut from the leader's
// inter-broker listener its followers fetch nothing and leave the ISR,
// while clients still produce to it; healed, they catch up and return.
func TestCutBrokersFromLeader(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(3), zkafkatest.Topic("t", 1, 3),
		zkafkatest.BrokerConfig("replica.lag.time.max.ms", "1000"))
	leader, err := cl.Leader("t", 0)
	must(t, err)
	// The leader's ISR change goes to the controller, through the
	// controller's link from the other brokers: were it the controller,
	// the cut would cut it from itself.
	must(t, cl.MoveController(leader%3+1))
	c := client(t, cl) // acks=all: a write waits for the ISR to shrink
	sent := []string{"before"}
	produce(t, c, "t", sent[0])
	must(t, cl.Cut(zkafkatest.OtherBrokers, zkafkatest.Broker(leader)))
	// Writes go on meanwhile: a follower falls behind the leader's log end.
	must(t, poll(t, 60*time.Second, func() error {
		v := fmt.Sprint("during-", len(sent))
		produce(t, c, "t", v)
		sent = append(sent, v)
		isr, err := cl.ISR("t", 0)
		now, _ := cl.Leader("t", 0)
		if err == nil && (len(isr) != 1 || now != leader) {
			return errf("ISR %v and leader %d, want the cut leader %d alone", isr, now, leader)
		}
		return err
	}))
	must(t, cl.Heal(zkafkatest.OtherBrokers, zkafkatest.Broker(leader)))
	waitISR(t, cl, 3)
	if got := consume(t, cl, "t", len(sent)); !slices.Equal(got, sent) {
		t.Fatalf("consumed %v, want %v", got, sent)
	}
}

// waitISR waits (up to 60 s) until partition t-0's ISR has n replicas.
func waitISR(t *testing.T, cl *zkafkatest.Cluster, n int) {
	t.Helper()
	must(t, poll(t, 60*time.Second, func() error {
		isr, err := cl.ISR("t", 0)
		if err == nil && len(isr) != n {
			return errf("ISR %v, want %d replicas", isr, n)
		}
		return err
	}))
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
