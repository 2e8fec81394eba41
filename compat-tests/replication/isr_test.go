package replication

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestISRShrinksAndRejoins: RF 3 with min.insync.replicas 2. With a
// follower stopped, acks=all produces go on once the ISR shrank; with
// both followers stopped they get NOT_ENOUGH_REPLICAS; restarted
// followers catch up (restarted brokers' fetchers find the leader at its
// address) and rejoin the ISR through the leader's AlterPartition, and
// acks=all writes then wait for them again.
func TestISRShrinksAndRejoins(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(time.Second))
	two := "2"
	createTopic(t, cl, "isr", 1, 3, map[string]*string{"min.insync.replicas": &two})
	z := cl.Brokers[0].ZK()
	waitState(t, cl, z, "isr", 0, "all in the ISR", isrIs(1, 2, 3))
	leader := leaderOf(t, cl, "isr", 0)
	var followers []int32
	for id := int32(1); id <= 3; id++ {
		if id != leader {
			followers = append(followers, id)
		}
	}
	ctx := ctxT(t)
	p := client(t, cl, kgo.DefaultProduceTopic("isr"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(),
		kgo.RecordRetries(2), kgo.RecordDeliveryTimeout(20*time.Second))
	produce := func(v string) error { return p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr() }
	if err := produce("a"); err != nil {
		t.Fatal(err)
	}
	cl.Broker(followers[0]).Stop()
	if err := produce("b"); err != nil {
		t.Fatalf("one follower stopped: %v", err)
	}
	waitState(t, cl, z, "isr", 0, "without the stopped follower", isrIs(sorted(leader, followers[1])...))
	cl.Broker(followers[1]).Stop()
	waitState(t, cl, z, "isr", 0, "the leader alone", isrIs(leader))
	if err := produce("c"); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("leader alone with min.insync.replicas 2: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	// acks=1 still works, beyond what the followers hold.
	p1 := client(t, cl, kgo.DefaultProduceTopic("isr"), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	for i := 0; i < 50; i++ {
		if err := p1.ProduceSync(ctx, kgo.StringRecord("one-"+strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Broker(followers[0]).Start()
	cl.Broker(followers[1]).Start()
	waitState(t, cl, z, "isr", 0, "all back in the ISR", isrIs(1, 2, 3))
	if err := produce("d"); err != nil {
		t.Fatalf("after the followers rejoined: %v", err)
	}
	got := consumeAll(t, cl, "isr", 53)
	if string(got[0].Value) != "a" || string(got[1].Value) != "b" || string(got[52].Value) != "d" {
		t.Fatalf("consumed %q %q ... %q", got[0].Value, got[1].Value, got[52].Value)
	}
	for _, e := range cl.Brokers {
		e.Stop()
	}
	_, want := logBytes(t, cl.Broker(leader), "isr", 0)
	for _, f := range followers {
		if _, data := logBytes(t, cl.Broker(f), "isr", 0); string(data) != string(want) {
			t.Fatalf("follower %d: %d bytes, leader %d", f, len(data), len(want))
		}
	}
}

func sorted(ids ...int32) []int32 {
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if ids[j] < ids[i] {
				ids[i], ids[j] = ids[j], ids[i]
			}
		}
	}
	return ids
}
