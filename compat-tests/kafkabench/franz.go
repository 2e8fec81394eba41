package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

// payload returns a 1 KiB-ish value that compresses about 2:1 (letters
// from a 16-symbol alphabet), so lz4 and zstd have work to do.
func payload(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefghijklmnop"[r.IntN(16)]
	}
	return b
}

func codecOf(name string) kgo.CompressionCodec {
	switch name {
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "gzip":
		return kgo.GzipCompression()
	}
	return kgo.NoCompression()
}

func newClient(addr string, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("kafkabench")}, opts...)...)
}

func createTopic(addr, topic string, partitions int32) error {
	cl, err := newClient(addr)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, 1, nil, topic)
	if err != nil {
		return err
	}
	if r := resp[topic]; r.Err != nil {
		return fmt.Errorf("create topic %s: %w", topic, r.Err)
	}
	// Wait until the topic's partitions have leaders in metadata.
	for {
		md, err := kadm.NewClient(cl).Metadata(ctx, topic)
		if err == nil {
			if t, ok := md.Topics[topic]; ok && t.Err == nil && len(t.Partitions) == int(partitions) {
				ready := true
				for _, p := range t.Partitions {
					ready = ready && p.Err == nil && p.Leader >= 0
				}
				if ready {
					return nil
				}
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// franzResult is one franz-go case.
type franzResult struct {
	records  int64
	bytes    int64 // value bytes (uncompressed)
	elapsed  time.Duration
	lat      benchkit.Latencies
	ack      benchkit.Latencies // end to end: produce acknowledgements
	brkCPU   time.Duration
	cliCPU   time.Duration // the client's (kafkabench's own) CPU
	errs     int64
	firstErr error
}

func (r *franzResult) recPerSec() float64 { return float64(r.records) / r.elapsed.Seconds() }
func (r *franzResult) mbPerSec() float64  { return float64(r.bytes) / r.elapsed.Seconds() / 1e6 }

// franzProduce produces records of val to topic for d (or maxRecords) with
// franz-go's defaults except acks and compression, and measures each
// record's latency from Produce to its promise.
func franzProduce(addr, topic string, acksAll bool, codec string, val []byte, d time.Duration, maxRecords int) (*franzResult, error) {
	opts := []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(codecOf(codec))}
	if acksAll {
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	} else {
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	cl, err := newClient(addr, opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	res := &franzResult{}
	lat := make([]time.Duration, maxRecords)
	var n, ok atomic.Int64
	var errMu sync.Mutex
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			errMu.Lock()
			res.errs++
			if res.firstErr == nil {
				res.firstErr = err
			}
			errMu.Unlock()
			return
		}
		i := ok.Add(1) - 1
		lat[i] = time.Since(r.Context.Value(startKey{}).(time.Time))
	}
	ctx := context.Background()
	start := time.Now()
	end := start.Add(d)
	for i := 0; i < maxRecords; i++ {
		if i%64 == 0 && time.Now().After(end) {
			break
		}
		now := time.Now()
		cl.Produce(ctx, &kgo.Record{Value: val, Context: context.WithValue(ctx, startKey{}, now)}, promise)
		n.Add(1)
	}
	fctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := cl.Flush(fctx); err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}
	res.elapsed = time.Since(start)
	res.records = ok.Load()
	res.bytes = res.records * int64(len(val))
	for _, l := range lat[:res.records] {
		res.lat.Add(l)
	}
	if res.errs > 0 {
		return res, fmt.Errorf("%d produce errors, first: %w", res.errs, res.firstErr)
	}
	return res, nil
}

type startKey struct{}

// franzConsume reads want records of topic from the start.
func franzConsume(addr, topic string, want int64, timeout time.Duration) (*franzResult, error) {
	cl, err := newClient(addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	res := &franzResult{}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	for res.records < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return res, fmt.Errorf("consumed %d of %d records in %v", res.records, want, timeout)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return res, fmt.Errorf("fetch: %v", errs[0].Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			res.records++
			res.bytes += int64(len(r.Value))
		})
	}
	res.elapsed = time.Since(start)
	return res, nil
}

// endToEnd produces at rate bytes/s of val-sized records for d and
// consumes them in the same process; each record carries its send time,
// and its latency is the time until the consumer sees it. The producer
// lingers 0 (Java's default before Kafka 4.0).
func endToEnd(addr, topic string, acksAll bool, val []byte, rate float64, d time.Duration) (*franzResult, float64, error) {
	popts := []kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0)}
	if acksAll {
		popts = append(popts, kgo.RequiredAcks(kgo.AllISRAcks()))
	} else {
		popts = append(popts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	}
	prod, err := newClient(addr, popts...)
	if err != nil {
		return nil, 0, err
	}
	defer prod.Close()
	cons, err := newClient(addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return nil, 0, err
	}
	defer cons.Close()
	// Make sure the consumer has its position before producing.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	warm := 500 * time.Millisecond
	res := &franzResult{}
	var sent atomic.Int64
	var consumed, measured atomic.Int64
	var cerr error
	cdone := make(chan struct{})
	go func() {
		defer close(cdone)
		for {
			fs := cons.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			if errs := fs.Errors(); len(errs) > 0 {
				cerr = errs[0].Err
				return
			}
			now := time.Now()
			fs.EachRecord(func(r *kgo.Record) {
				if len(r.Value) < 16 {
					return
				}
				ts := time.Unix(0, int64(binary.BigEndian.Uint64(r.Value)))
				seq := int64(binary.BigEndian.Uint64(r.Value[8:]))
				consumed.Add(1)
				if seq >= 0 {
					res.lat.Add(now.Sub(ts))
					measured.Add(1)
				}
			})
		}
	}()
	// Probe records until the consumer sees one (its offset is at the end).
	deadline := time.Now().Add(15 * time.Second)
	for {
		v := make([]byte, len(val))
		copy(v, val)
		binary.BigEndian.PutUint64(v, uint64(time.Now().UnixNano()))
		binary.BigEndian.PutUint64(v[8:], ^uint64(0))
		prod.Produce(ctx, &kgo.Record{Value: v}, nil)
		time.Sleep(50 * time.Millisecond)
		if consumed.Load() > 0 || time.Now().After(deadline) {
			break
		}
	}
	perSec := rate / float64(len(val))
	start := time.Now()
	end := start.Add(warm + d)
	measureFrom := start.Add(warm)
	var seq int64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var produceErrs atomic.Int64
	var ackMu sync.Mutex
	var recPool sync.Pool // *kgo.Record with a Value of len(val)
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			produceErrs.Add(1)
			return
		}
		// The acknowledgement's latency: a tail here is the produce
		// path's, one only in res.lat is the fetch path's.
		if seq := int64(binary.BigEndian.Uint64(r.Value[8:])); seq >= 0 {
			ts := time.Unix(0, int64(binary.BigEndian.Uint64(r.Value)))
			ackMu.Lock()
			res.ack.Add(time.Since(ts))
			ackMu.Unlock()
		}
		// franz-go is done with the record once its promise is called:
		// reused, so that the load generator's garbage does not add to
		// the latency it measures.
		*r = kgo.Record{Value: r.Value}
		recPool.Put(r)
	}
	for now := range tick.C {
		if now.After(end) {
			break
		}
		due := int64(now.Sub(start).Seconds() * perSec)
		for ; sent.Load() < due; sent.Add(1) {
			rec, _ := recPool.Get().(*kgo.Record)
			if rec == nil {
				rec = &kgo.Record{Value: slices.Clone(val)}
			}
			v := rec.Value
			t := time.Now()
			binary.BigEndian.PutUint64(v, uint64(t.UnixNano()))
			s := int64(-1)
			if t.After(measureFrom) {
				s = seq
				seq++
			}
			binary.BigEndian.PutUint64(v[8:], uint64(s))
			prod.Produce(ctx, rec, promise)
		}
	}
	elapsed := time.Since(start)
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	prod.Flush(fctx)
	fcancel()
	// Wait for the consumer to catch up (bounded).
	for i := 0; i < 300 && measured.Load() < seq; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-cdone
	res.records = seq
	res.bytes = sent.Load() * int64(len(val))
	res.elapsed = elapsed
	achieved := float64(res.bytes) / elapsed.Seconds()
	if cerr != nil {
		return res, achieved, cerr
	}
	if n := produceErrs.Load(); n > 0 {
		return res, achieved, fmt.Errorf("%d produce errors", n)
	}
	if int64(res.lat.Len()) < seq {
		return res, achieved, fmt.Errorf("consumed %d of %d measured records", res.lat.Len(), seq)
	}
	return res, achieved, nil
}
