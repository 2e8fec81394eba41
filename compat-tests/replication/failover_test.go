package replication

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestLeaderFailoverKeepsAckedRecords: RF 3; an idempotent acks=all
// franz-go producer writes numbered records while the partition's leader
// shuts down. The controller elects a follower (the first live ISR
// member), the producer moves on by itself (its retries deduplicated by
// the new leader from the producer state the follower built), and a
// consumer reads every acknowledged record exactly once, in order, with
// no gaps in the offsets. A consumer reading throughout never sees a
// record that is not in the final log at that offset (it reads up to the
// high watermark only). The old leader returns as a follower and catches
// up.
func TestLeaderFailoverKeepsAckedRecords(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(2*time.Second))
	createTopic(t, cl, "fo", 1, 3, nil)
	z := cl.Brokers[0].ZK()
	waitState(t, cl, z, "fo", 0, "all in the ISR", isrIs(1, 2, 3))
	old := leaderOf(t, cl, "fo", 0)
	ctx := ctxT(t)
	p := client(t, cl, kgo.DefaultProduceTopic("fo"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(40*time.Second), kgo.ProducerLinger(0))
	var acked kafkaenv.Acked
	pctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; pctx.Err() == nil && i < 5000; i++ {
			// Several in flight, so that some are retried across the failover.
			var wg sync.WaitGroup
			for j := 0; j < 5; j++ {
				n := i*5 + j
				wg.Add(1)
				p.Produce(pctx, kgo.StringRecord(strconv.Itoa(n)), func(_ *kgo.Record, err error) {
					defer wg.Done()
					if err == nil {
						acked.Add(n)
					}
				})
			}
			wg.Wait()
		}
	}()
	// The consumer: seen[offset] = value, checked against the final log.
	seen := map[int64]string{}
	cctx, cstop := context.WithCancel(ctx)
	cdone := make(chan struct{})
	cons := client(t, cl, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"fo": {0: kgo.NewOffset().AtStart()}}))
	go func() {
		defer close(cdone)
		for cctx.Err() == nil {
			cons.PollFetches(cctx).EachRecord(func(r *kgo.Record) { seen[r.Offset] = string(r.Value) })
		}
	}()
	acked.WaitFor(t, 200, 40*time.Second)
	cl.Broker(old).Stop()
	s := waitState(t, cl, z, "fo", 0, "led by another broker", func(s partitionState) bool { return s.Leader >= 0 && s.Leader != old })
	before := acked.Len()
	acked.WaitFor(t, before+200, 40*time.Second)
	cl.Broker(old).Start()
	waitState(t, cl, z, "fo", 0, "the old leader back in the ISR", isrIs(1, 2, 3))
	acked.WaitFor(t, before+400, 40*time.Second)
	stop()
	<-done
	cstop()
	<-cdone
	want := acked.List()
	t.Logf("%d records acknowledged; leader %d -> %d (epoch %d)", len(want), old, s.Leader, s.LeaderEpoch)
	// Every acknowledged record once, in order; unacknowledged ones (the
	// producer's last, cancelled) may be there too, after the acked.
	end := listEnd(t, cl, "fo")
	if end < int64(len(want)) {
		t.Fatalf("log end %d below the %d acknowledged records", end, len(want))
	}
	got := consumeAll(t, cl, "fo", int(end))
	seenAt := map[int]int64{}
	last := -1
	for i, r := range got {
		if r.Offset != int64(i) {
			t.Fatalf("record %d at offset %d: a gap", i, r.Offset)
		}
		n, _ := strconv.Atoi(string(r.Value))
		if _, dup := seenAt[n]; dup {
			t.Fatalf("record %d duplicated (offsets %d and %d)", n, seenAt[n], r.Offset)
		}
		if n < last {
			t.Fatalf("record %d after %d: out of order", n, last)
		}
		seenAt[n], last = r.Offset, n
	}
	for _, n := range want {
		if _, ok := seenAt[n]; !ok {
			t.Fatalf("acknowledged record %d lost", n)
		}
	}
	if len(seen) == 0 {
		t.Fatal("the consumer saw nothing during the test")
	}
	for off, v := range seen {
		if off >= int64(len(got)) || string(got[off].Value) != v {
			t.Fatalf("the consumer saw %q at offset %d, which the final log does not hold", v, off)
		}
	}
	t.Logf("the consumer saw %d records during the failover", len(seen))
}
