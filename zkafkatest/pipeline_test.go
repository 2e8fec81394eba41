package zkafkatest_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestProducePipelinedFranz: franz-go producing 0.2–1 KiB records in large
// batches with several requests in flight on its one connection (the
// broker reads the next request while it appends the current one) gets
// every record acknowledged at the offset of its place in the stream,
// with acks=1 and with acks=all (idempotent), and a consumer reads them
// back in that order.
func TestProducePipelinedFranz(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("ack1", 1, 1), zkafkatest.Topic("ackall", 1, 1))
	const n = 20000
	val := make([]byte, 1000)
	for _, c := range []struct {
		topic string
		opts  []kgo.Opt
	}{
		{"ack1", []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(5)}},
		{"ackall", []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}},
	} {
		p := client(t, cl, append(c.opts, kgo.DefaultProduceTopic(c.topic), kgo.ProducerLinger(5*time.Millisecond),
			kgo.ProducerBatchMaxBytes(256<<10))...)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []string
		for i := 0; i < n; i++ {
			v := append([]byte(fmt.Sprintf("%08d", i)), val[:200+i%5*200]...) // requests of varying sizes
			wg.Add(1)
			p.Produce(ctx(t, 60*time.Second), &kgo.Record{Value: v}, func(r *kgo.Record, err error) {
				defer wg.Done()
				if err != nil || r.Offset != int64(i) {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("record %d: offset %d, %v", i, r.Offset, err))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(bad) > 0 {
			t.Fatalf("%s: %d records wrong, first %s", c.topic, len(bad), bad[0])
		}
		got := consume(t, cl, c.topic, n)
		for i, v := range got {
			if v[:8] != fmt.Sprintf("%08d", i) {
				t.Fatalf("%s: record %d reads %q", c.topic, i, v[:8])
			}
		}
	}
}
