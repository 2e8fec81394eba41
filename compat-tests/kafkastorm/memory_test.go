package kafkastorm

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// maxPeakRSS is the goal: the broker's peak resident memory under the
// storm, with the default configuration.
const maxPeakRSS = 300 * 1000 * 1000

// maxSettledRSS bounds the broker's resident memory once the storm is
// over and its buffers have been idle long enough to be given back.
const maxSettledRSS = 100 * 1000 * 1000

const (
	topic        = "good"
	valueBytes   = 8 << 10
	batchSize    = 25  // records per ProduceSync: ~200 KiB requests
	minRecords   = 500 // produced even if the storm ends sooner
	produceEvery = 20 * time.Millisecond
	clientLimit  = 3 * time.Minute
	// maxProduceWait is a generous bound on one produce request during
	// the storm: a producer made to wait for the storm's end fails it.
	maxProduceWait = 20 * time.Second
)

func TestStormMemoryBoundedGoodClientsServed(t *testing.T) {
	s := startServer(t)
	idle := s.peakRSS()
	createTopic(t, s.kafkaAddr)

	ctx, cancel := context.WithTimeout(context.Background(), clientLimit)
	defer cancel()
	stormDone := make(chan struct{})
	var produced atomic.Int64
	var prod producerResult
	var wg sync.WaitGroup
	producerDone := make(chan struct{})
	wg.Add(2)
	go func() { defer wg.Done(); prod = produce(ctx, s.kafkaAddr, stormDone, producerDone, &produced) }()
	var cons consumerResult
	go func() { defer wg.Done(); cons = consume(ctx, s.kafkaAddr, producerDone, &produced) }()

	start := time.Now()
	st := runStorm(s.kafkaAddr, smallFrameCount(t))
	stormTime := time.Since(start)
	close(stormDone)
	wg.Wait()
	peak := s.peakRSS()
	t.Logf("storm: %d small and %d large frames on %d connections in %v (%d MiB of partial bodies written, %d dial errors %v)",
		st.small.Load(), st.big.Load(), stormConns, stormTime.Round(time.Millisecond), st.bigBytes.Load()>>20,
		st.dialErrors.Load(), st.firstDialErr.Load())
	t.Logf("broker peak RSS: %.1f MB idle, %.1f MB after the storm (goal <= %d MB)",
		float64(idle)/1e6, float64(peak)/1e6, maxPeakRSS/1000000)
	t.Logf("good producer: %d records in %d requests, slowest request %v; consumer read %d",
		prod.records, prod.requests, prod.slowest.Round(time.Millisecond), cons.read)

	if !s.running() {
		t.Fatalf("zkafka run exited during the storm:\n%s", s.tail())
	}
	t.Logf("broker log: %d oversize prefixes, %d connections evicted by the request budget",
		s.countLog("request size out of bounds"), s.countLog("request memory exhausted"))
	if prod.err != nil {
		t.Errorf("producer: %v", prod.err)
	}
	if prod.slowest > maxProduceWait {
		t.Errorf("a produce request took %v during the storm, want <= %v", prod.slowest, maxProduceWait)
	}
	if cons.err != nil {
		t.Errorf("consumer during the storm: %v", cons.err)
	}
	if peak > maxPeakRSS {
		t.Errorf("broker peak RSS %.1f MB, want <= %d MB", float64(peak)/1e6, maxPeakRSS/1000000)
	}
	if n := s.countLog("closing connection", strconv.Itoa(maxRequestBytes+1)); n == 0 {
		t.Errorf("no log line names the oversize request size %d:\n%s", maxRequestBytes+1, s.tail())
	}
	// The buffers go back: once the connections are idle, resident memory
	// falls back towards where it started.
	settled, deadline := s.rss(), time.Now().Add(30*time.Second)
	for settled > maxSettledRSS && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		settled = s.rss()
	}
	t.Logf("broker RSS after the storm, settled: %.1f MB", float64(settled)/1e6)
	if settled > maxSettledRSS {
		t.Errorf("broker RSS %.1f MB 30 s after the storm, want <= %d MB", float64(settled)/1e6, maxSettledRSS/1000000)
	}
	// Nothing in the log damaged: read everything again from the start.
	again := consumeAll(t, s.kafkaAddr, prod.records)
	if again.err != nil || again.read != prod.records {
		t.Errorf("after the storm: read %d of %d records: %v", again.read, prod.records, again.err)
	}
}

func createTopic(t *testing.T, addr string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
}

// value is record i's value: valueBytes that depend on i.
func value(i int) []byte {
	v := make([]byte, valueBytes)
	for j := range v {
		v[j] = byte(i*131 + j*7 + j>>8)
	}
	return v
}

type producerResult struct {
	records, requests int
	slowest           time.Duration
	err               error
}

// produce sends batches of records with keys 0, 1, 2, ... until the storm
// is over and at least minRecords went out; every batch must be
// acknowledged. It closes done when it returns.
func produce(ctx context.Context, addr string, stormDone <-chan struct{}, done chan<- struct{}, produced *atomic.Int64) (r producerResult) {
	defer close(done)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		r.err = err
		return r
	}
	defer cl.Close()
	for {
		select {
		case <-stormDone:
			if r.records >= minRecords {
				return r
			}
		default:
		}
		recs := make([]*kgo.Record, batchSize)
		for i := range recs {
			n := r.records + i
			recs[i] = &kgo.Record{Key: []byte(strconv.Itoa(n)), Value: value(n)}
		}
		t0 := time.Now()
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			r.err = fmt.Errorf("record %d: %w", r.records, err)
			return r
		}
		r.slowest = max(r.slowest, time.Since(t0))
		r.records += batchSize
		r.requests++
		produced.Store(int64(r.records))
		time.Sleep(produceEvery) // a steady client, not a second storm
	}
}

type consumerResult struct {
	read int
	err  error
}

// consume reads the topic from the start while the producer runs, and
// checks each record: the next key, in order, with its value.
func consume(ctx context.Context, addr string, producerDone <-chan struct{}, produced *atomic.Int64) (r consumerResult) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return consumerResult{err: err}
	}
	defer cl.Close()
	for {
		select {
		case <-producerDone:
			if int64(r.read) >= produced.Load() {
				return r
			}
		default:
		}
		if ctx.Err() != nil {
			r.err = fmt.Errorf("read %d of %d records: %w", r.read, produced.Load(), ctx.Err())
			return r
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		for _, e := range fs.Errors() {
			if e.Err != context.DeadlineExceeded && e.Err != context.Canceled {
				r.err = fmt.Errorf("fetch: %v", e.Err)
				return r
			}
		}
		if err := checkRecords(fs, &r.read); err != nil {
			r.err = err
			return r
		}
	}
}

func checkRecords(fs kgo.Fetches, next *int) error {
	var err error
	fs.EachRecord(func(rec *kgo.Record) {
		if err != nil {
			return
		}
		if string(rec.Key) != strconv.Itoa(*next) || !bytes.Equal(rec.Value, value(*next)) || rec.Offset != int64(*next) {
			err = fmt.Errorf("record at offset %d (key %q): want key %d there with its value", rec.Offset, rec.Key, *next)
			return
		}
		*next++
	})
	return err
}

// consumeAll reads want records from the start with a new client.
func consumeAll(t *testing.T, addr string, want int) consumerResult {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	close(done)
	var n atomic.Int64
	n.Store(int64(want))
	return consume(ctx, addr, done, &n)
}
