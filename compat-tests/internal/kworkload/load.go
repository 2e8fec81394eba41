package kworkload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Producer writes Value(p, seq) records round robin over partitions
// 0..n-1 at a bounded rate with an idempotent acks=all franz-go producer,
// and records what was acknowledged.
type Producer struct {
	cl      *kgo.Client
	topic   string
	parts   int32
	cancel  context.CancelFunc
	done    chan struct{}
	wg      sync.WaitGroup // outstanding promises
	stop    sync.Once
	stopErr error

	mu struct {
		sync.Mutex
		acks    []Ack
		failed  int
		lastErr error
	}
}

// ProducerOpts are kgo options every workload producer uses: acks=all,
// idempotent (franz-go's default with acks=all), one manual partition per
// record, a bounded buffer, a delivery timeout so a partition that never
// comes back fails its records instead of holding them for ever, and a
// request timeout of 5 s + 3 s (franz-go's default is 10 s + 10 s) so a
// request stuck on a paused broker's socket is given up and retried
// elsewhere sooner.
func ProducerOpts(seeds []string) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxBufferedRecords(4096),
		kgo.RecordDeliveryTimeout(60 * time.Second), kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.ProducerLinger(0), kgo.ProduceRequestTimeout(5 * time.Second), kgo.RequestTimeoutOverhead(3 * time.Second)}
}

// StartProducer starts producing rate records per second (over all
// partitions) to topic until Stop.
func StartProducer(seeds []string, topic string, parts int32, rate int) (*Producer, error) {
	cl, err := kgo.NewClient(ProducerOpts(seeds)...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Producer{cl: cl, topic: topic, parts: parts, cancel: cancel, done: make(chan struct{})}
	go p.run(ctx, rate)
	return p, nil
}

func (p *Producer) run(ctx context.Context, rate int) {
	defer close(p.done)
	tick := time.NewTicker(time.Second / time.Duration(max(rate, 1)))
	defer tick.Stop()
	seq := make([]int64, p.parts)
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		part := int32(i) % p.parts
		s := seq[part]
		seq[part]++
		r := &kgo.Record{Topic: p.topic, Partition: part, Value: []byte(Value(part, s))}
		sent := time.Now()
		p.wg.Add(1)
		p.cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
			defer p.wg.Done()
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil {
				p.mu.failed++
				p.mu.lastErr = err
				return
			}
			p.mu.acks = append(p.mu.acks, Ack{Partition: r.Partition, Offset: r.Offset, Seq: s, Sent: sent, At: time.Now()})
		})
	}
}

// Stop stops producing, waits up to timeout for the records in flight, and
// closes the client. Calls after the first return the first's result.
func (p *Producer) Stop(timeout time.Duration) error {
	p.stop.Do(func() {
		p.cancel()
		<-p.done
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		p.stopErr = p.cl.Flush(ctx)
		p.cl.Close() // fails what is still buffered
		p.wg.Wait()
	})
	return p.stopErr
}

// Acks returns a copy of the acknowledgements so far.
func (p *Producer) Acks() []Ack {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Ack(nil), p.mu.acks...)
}

// Failed is how many records failed, and the last error.
func (p *Producer) Failed() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.failed, p.mu.lastErr
}

// FirstAcks returns, for each partition, how long after t0 the first
// acknowledgement of a record sent after t0 arrived; ok is false while a
// partition of parts has none. Records sent before t0 do not count: a
// leader killed at t0 may still have acknowledged those from its socket
// buffer, and only the new leader can acknowledge what is sent after.
func (p *Producer) FirstAcks(parts []int32, t0 time.Time) (map[int32]time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int32]time.Duration{}
	for i := len(p.mu.acks) - 1; i >= 0 && p.mu.acks[i].At.After(t0); i-- {
		if a := p.mu.acks[i]; a.Sent.After(t0) {
			out[a.Partition] = a.At.Sub(t0) // walking back: the earliest wins
		}
	}
	for _, part := range parts {
		if _, ok := out[part]; !ok {
			return out, false
		}
	}
	return out, true
}

// WaitAcks waits up to timeout until every partition in parts has an
// acknowledgement after t0 and returns the longest wait (the failover
// time of the slowest partition).
func (p *Producer) WaitAcks(parts []int32, t0 time.Time, timeout time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(timeout)
	for {
		got, ok := p.FirstAcks(parts, t0)
		if ok {
			var worst time.Duration
			for _, part := range parts {
				worst = max(worst, got[part])
			}
			return worst, nil
		}
		if time.Now().After(deadline) {
			var missing []int32
			for _, part := range parts {
				if _, ok := got[part]; !ok {
					missing = append(missing, part)
				}
			}
			n, err := p.Failed()
			return 0, fmt.Errorf("no acknowledged write on partitions %v within %v of the fault (%d records failed so far, last: %v)", missing, timeout, n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Consumer reads every partition from the start until Stop, recording
// what it saw.
type Consumer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	stop   sync.Once
	mu     sync.Mutex
	seen   []Rec
}

// StartConsumer starts consuming partitions 0..n-1 of topic from offset 0.
func StartConsumer(seeds []string, topic string, parts int32) (*Consumer, error) {
	cl, err := kgo.NewClient(consumeOpts(seeds, topic, parts)...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Consumer{cl: cl, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			var recs []Rec
			fs.EachRecord(func(r *kgo.Record) {
				recs = append(recs, Rec{Partition: r.Partition, Offset: r.Offset, Value: string(r.Value)})
			})
			c.mu.Lock()
			c.seen = append(c.seen, recs...)
			c.mu.Unlock()
		}
	}()
	return c, nil
}

func consumeOpts(seeds []string, topic string, parts int32) []kgo.Opt {
	offs := map[int32]kgo.Offset{}
	for p := range parts {
		offs[p] = kgo.NewOffset().AtStart()
	}
	return []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offs}),
		kgo.MetadataMinAge(100 * time.Millisecond), kgo.FetchMaxWait(200 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}
}

// Count is how many records the consumer has seen so far.
func (c *Consumer) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// Stop stops the consumer (once) and returns what it saw.
func (c *Consumer) Stop() []Rec {
	c.stop.Do(func() {
		c.cancel()
		<-c.done
		c.cl.Close()
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

// ReadAll reads partitions 0..n-1 of topic from the start up to their end
// offsets (ListOffsets LATEST: the high watermark) with a fresh client.
func ReadAll(seeds []string, topic string, parts int32, timeout time.Duration) ([]Rec, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cl, err := kgo.NewClient(consumeOpts(seeds, topic, parts)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	next := map[int32]int64{}
	var out []Rec
	done := func() bool {
		for p, end := range want {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return out, fmt.Errorf("read up to %v of end offsets %v: %w (last fetch error: %v)", next, want, ctx.Err(), err)
		}
		fs.EachError(func(_ string, _ int32, e error) {
			if !errors.Is(e, context.Canceled) {
				err = e
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < want[r.Partition] {
				out = append(out, Rec{Partition: r.Partition, Offset: r.Offset, Value: string(r.Value)})
			}
			next[r.Partition] = r.Offset + 1
		})
	}
	return out, nil
}
