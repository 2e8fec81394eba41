package replication

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestSixPartitionsSurviveABrokerRestart: 6 partitions, RF 3,
// min.insync.replicas 2, every broker leading two. Broker 2 stops while
// an idempotent acks=all producer writes to all partitions (its
// partitions move to other brokers, the ISRs shrink), then returns and
// catches up on every partition (one fetcher per leader, several
// partitions each). In the end every partition's three logs are
// byte-identical and hold all records once.
func TestSixPartitionsSurviveABrokerRestart(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(2*time.Second))
	two := "2"
	createTopic(t, cl, "six", 6, 3, map[string]*string{"min.insync.replicas": &two})
	z := cl.Brokers[0].ZK()
	for p := 0; p < 6; p++ {
		waitState(t, cl, z, "six", p, "all in the ISR", isrIs(1, 2, 3))
	}
	ctx := ctxT(t)
	p := client(t, cl, kgo.DefaultProduceTopic("six"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.RecordDeliveryTimeout(40*time.Second))
	produce := func(from, n int) {
		t.Helper()
		var rs []*kgo.Record
		for i := from; i < from+n; i++ {
			rs = append(rs, kgo.StringRecord(strconv.Itoa(i)))
		}
		if err := p.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce %d..%d: %v", from, from+n, err)
		}
	}
	produce(0, 600)
	cl.Broker(2).Stop()
	produce(600, 600)
	cl.Broker(2).Start()
	for p := 0; p < 6; p++ {
		waitState(t, cl, z, "six", p, "broker 2 back in the ISR", isrIs(1, 2, 3))
	}
	produce(1200, 60)
	c := client(t, cl, kgo.ConsumeTopics("six"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	cctx := kafkaenv.Context(t, 30*time.Second)
	for len(seen) < 1260 && cctx.Err() == nil {
		c.PollFetches(cctx).EachRecord(func(r *kgo.Record) {
			if seen[string(r.Value)] {
				t.Fatalf("record %s twice", r.Value)
			}
			seen[string(r.Value)] = true
		})
	}
	if len(seen) != 1260 {
		t.Fatalf("consumed %d of 1260 records", len(seen))
	}
	c.Close()
	for _, e := range cl.Brokers {
		e.Stop()
	}
	total := 0
	for part := 0; part < 6; part++ {
		_, want := logBytes(t, cl.Broker(1), "six", part)
		for _, id := range []int32{2, 3} {
			if _, got := logBytes(t, cl.Broker(id), "six", part); !bytes.Equal(got, want) {
				t.Fatalf("six-%d: broker %d holds %d bytes, broker 1 %d", part, id, len(got), len(want))
			}
		}
		total += len(want)
	}
	if total == 0 {
		t.Fatal("no data")
	}
}
