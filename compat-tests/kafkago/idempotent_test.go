package kafkago

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func produceRaw(c *rawConn, topic string, partition int32, batch []byte) *kmsg.ProduceResponseTopicPartition {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.roundTrip(req).(*kmsg.ProduceResponse)
	return &resp.Topics[0].Partitions[0]
}

func createTopic(t testing.TB, e *env, name string, partitions int32) {
	t.Helper()
	if _, err := e.Admin().CreateTopic(ctxT(t), partitions, 1, nil, name); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// TestDuplicateBatchAppendedOnce sends the same idempotent batch twice on
// the wire: the retry is answered with the first offset and not appended.
func TestDuplicateBatchAppendedOnce(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "dups", 1)
	c := dialRaw(t, e.Addr)
	ipid := kmsg.NewPtrInitProducerIDRequest()
	ipid.Version = 4
	pr := c.roundTrip(ipid).(*kmsg.InitProducerIDResponse)
	if pr.ErrorCode != 0 || pr.ProducerID < 0 {
		t.Fatalf("InitProducerId: %+v", pr)
	}
	pid, epoch := pr.ProducerID, pr.ProducerEpoch

	first := produceRaw(c, "dups", 0, buildBatch(pid, epoch, 0, nowMs(), "a", "b", "c"))
	again := produceRaw(c, "dups", 0, buildBatch(pid, epoch, 0, nowMs(), "a", "b", "c"))
	if first.ErrorCode != 0 || again.ErrorCode != 0 || again.BaseOffset != first.BaseOffset {
		t.Fatalf("first %+v, retry %+v: want the retry answered with the first offset", first, again)
	}
	next := produceRaw(c, "dups", 0, buildBatch(pid, epoch, 3, nowMs(), "d"))
	if next.ErrorCode != 0 || next.BaseOffset != 3 {
		t.Fatalf("next batch: %+v", next)
	}
	gap := produceRaw(c, "dups", 0, buildBatch(pid, epoch, 10, nowMs(), "x"))
	if gap.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap: error %d, want OUT_OF_ORDER_SEQUENCE_NUMBER", gap.ErrorCode)
	}
	old := produceRaw(c, "dups", 0, buildBatch(pid, epoch-1, 4, nowMs(), "x"))
	if epoch > 0 && old.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("old epoch: error %d", old.ErrorCode)
	}
	if got := consumeN(t, e, "dups", 4); len(got) != 4 || string(got[3].Value) != "d" {
		t.Fatalf("log holds %d records", len(got))
	}
	// The state survives a restart: the retry is still recognised.
	e.Restart()
	c = dialRaw(t, e.Addr)
	again = produceRaw(c, "dups", 0, buildBatch(pid, epoch, 3, nowMs(), "d"))
	if again.ErrorCode != 0 || again.BaseOffset != 3 {
		t.Fatalf("retry after restart: %+v", again)
	}
	if hw := listOffset(t, e, "dups", 0, -1); hw != 4 {
		t.Fatalf("high watermark %d after a duplicate, want 4", hw)
	}
}

// flakyDialer cuts a connection right after it carried a Produce request,
// so the client never sees the response and retries the batch.
type flakyDialer struct {
	drops atomic.Int32
}

func (d *flakyDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &flakyConn{Conn: c, d: d}, nil
}

type flakyConn struct {
	net.Conn
	d      *flakyDialer
	mu     sync.Mutex
	broken bool
}

func (c *flakyConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if len(p) > 6 && p[4] == 0 && p[5] == 0 && c.d.drops.Add(-1) >= 0 { // api key 0: Produce
		c.mu.Lock()
		c.broken = true
		c.mu.Unlock()
		time.AfterFunc(50*time.Millisecond, func() { c.Conn.Close() })
	}
	return n, err
}

func (c *flakyConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	broken := c.broken
	c.mu.Unlock()
	if broken {
		return 0, net.ErrClosed
	}
	return c.Conn.Read(p)
}

// TestIdempotentProducerRetries drops connections after produce requests
// reached the broker: kgo retries with the same sequence numbers and every
// record is in the log exactly once.
func TestIdempotentProducerRetries(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "retries", 1)
	d := &flakyDialer{}
	d.drops.Store(3)
	p := e.Client(kgo.Dialer(d.DialContext), kgo.DefaultProduceTopic("retries"), kgo.RequestRetries(20),
		kgo.ProducerLinger(0))
	const n = 300
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := 0; i < n; i++ {
		wg.Add(1)
		p.Produce(ctxT(t), &kgo.Record{Value: []byte{byte(i), byte(i >> 8)}}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Add(1)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d records failed", failed.Load())
	}
	if d.drops.Load() >= 0 {
		t.Fatalf("no connection was dropped (%d drops left)", d.drops.Load())
	}
	got := consumeN(t, e, "retries", n)
	seen := map[int]bool{}
	for _, r := range got {
		v := int(r.Value[0]) | int(r.Value[1])<<8
		if seen[v] {
			t.Fatalf("record %d appended twice", v)
		}
		seen[v] = true
	}
	if hw := listOffset(t, e, "retries", 0, -1); hw != n {
		t.Fatalf("high watermark %d, want %d (duplicates appended?)", hw, n)
	}
}
