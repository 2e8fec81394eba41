package kafkaquota

import (
	"context"
	"crypto/rand"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/zkafkatest"
)

// quotaWindow is the window the test clusters measure over: 3 samples of
// 1 s, so that a client's first burst is averaged over 2 s (Kafka's
// default, 11 samples, lets a client send ten seconds' worth before the
// first throttle, longer than these tests run).
var quotaWindow = []zkafkatest.Option{
	zkafkatest.BrokerConfig("quota.window.num", "3"),
	zkafkatest.BrokerConfig("quota.window.size.seconds", "1"),
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// throttles counts the throttle times a client was told (kgo's
// OnBrokerThrottle hook).
type throttles struct {
	n   atomic.Int64
	max atomic.Int64
}

func (h *throttles) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.n.Add(1)
		if int64(d) > h.max.Load() {
			h.max.Store(int64(d))
		}
	}
}

// client is a kgo client of the cluster with a client id.
func client(t *testing.T, cl *zkafkatest.Cluster, id string, opts ...kgo.Opt) (*kgo.Client, *throttles) {
	h := &throttles{}
	opts = append([]kgo.Opt{kgo.SeedBrokers(cl.Seeds()...), kgo.ClientID(id), kgo.WithHooks(h),
		kgo.ProducerBatchCompression(kgo.NoCompression())}, opts...)
	c, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, h
}

// admin is a kadm client.
func admin(t *testing.T, cl *zkafkatest.Cluster) *kadm.Client {
	c, _ := client(t, cl, "admin")
	return kadm.NewClient(c)
}

func clientEntity(id string) kadm.ClientQuotaEntity {
	return kadm.ClientQuotaEntity{{Type: "client-id", Name: &id}}
}

// setQuota sets (or, with remove, removes) key for entity through the
// broker with id via (a raw request, so that the broker is known).
func setQuota(t *testing.T, ctx context.Context, c *kgo.Client, via int32, entity kadm.ClientQuotaEntity, key string, v float64, remove bool) {
	t.Helper()
	req := kmsg.NewPtrAlterClientQuotasRequest()
	e := kmsg.NewAlterClientQuotasRequestEntry()
	for _, part := range entity {
		pe := kmsg.NewAlterClientQuotasRequestEntryEntity()
		pe.Type, pe.Name = part.Type, part.Name
		e.Entity = append(e.Entity, pe)
	}
	op := kmsg.NewAlterClientQuotasRequestEntryOp()
	op.Key, op.Value, op.Remove = key, v, remove
	e.Ops = append(e.Ops, op)
	req.Entries = append(req.Entries, e)
	resp, err := req.RequestWith(ctx, c.Broker(int(via)))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Entries) != 1 || resp.Entries[0].ErrorCode != 0 {
		t.Fatalf("AlterClientQuotas %v %s: %+v", entity, key, resp.Entries)
	}
}

// leaderOf is the leader of partition 0 of topic.
func leaderOf(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) int32 {
	t.Helper()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return md.Topics[topic].Partitions[0].Leader
}

// produceFor produces records of size bytes for d (bounded by count) and
// returns the bytes acknowledged per second.
func produceFor(t *testing.T, ctx context.Context, c *kgo.Client, topic string, size int, d time.Duration, count int) float64 {
	t.Helper()
	var acked atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	val := make([]byte, size)
	rand.Read(val) // incompressible: the quota counts the bytes on the wire
	start := time.Now()
	for i := 0; i < count && time.Since(start) < d; i++ {
		wg.Add(1)
		c.Produce(ctx, &kgo.Record{Topic: topic, Value: val, Key: []byte(strconv.Itoa(i))}, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
				return
			}
			acked.Add(int64(len(r.Value)))
		})
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		t.Fatal(err)
	}
	return float64(acked.Load()) / time.Since(start).Seconds()
}

// consumeFor reads topic from the start for d or until want bytes, and
// returns the bytes per second and checks the offsets came in order
// without a gap.
func consumeFor(t *testing.T, ctx context.Context, c *kgo.Client, d time.Duration, want int64) float64 {
	t.Helper()
	start := time.Now()
	var got int64
	next := int64(0)
	for time.Since(start) < d && got < want {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := c.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		fs.EachError(func(_ string, _ int32, err error) {
			if err != context.DeadlineExceeded {
				t.Errorf("fetch: %v", err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != next {
				t.Fatalf("offset %d after %d: a record was skipped", r.Offset, next-1)
			}
			next++
			got += int64(len(r.Value))
		})
	}
	return float64(got) / time.Since(start).Seconds()
}
