package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
)

// payload is a 1 KiB value of 16 letters (it compresses about 2:1, though
// these cases do not compress).
func payload() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, recSize)
	for i := range b {
		b[i] = "abcdefghijklmnop"[r.IntN(16)]
	}
	return b
}

func client(c *kcluster.Cluster, opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Seeds()...), kgo.ClientID("kafkaclusterbench"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(30 * time.Second)}, opts...)...)
}

type produced struct {
	records int64
	elapsed time.Duration
	cpu     time.Duration // the brokers'
	lat     benchkit.Latencies
}

func (p produced) mbps() float64 { return float64(p.records*recSize) / p.elapsed.Seconds() / 1e6 }
func (p produced) cpuPerGB() float64 {
	return p.cpu.Seconds() / (float64(p.records*recSize) / 1e9)
}

// produce runs franz-go acks=all (idempotent) closed loop into topic for
// *caseDur or *caseMax records.
func produce(c *kcluster.Cluster, topic string) (produced, error) {
	cl, err := client(c, kgo.DefaultProduceTopic(topic))
	if err != nil {
		return produced{}, err
	}
	defer cl.Close()
	val := payload()
	var res produced
	var mu sync.Mutex
	var errs atomic.Int64
	var firstErr error
	syscall.Sync()
	cpu0 := brokerCPU(c)
	start := time.Now()
	end := start.Add(*caseDur)
	for i := 0; i < *caseMax; i++ {
		if i%64 == 0 && time.Now().After(end) {
			break
		}
		sent := time.Now()
		cl.Produce(context.Background(), &kgo.Record{Value: val}, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if errs.Add(1) == 1 {
					firstErr = err
				}
				return
			}
			res.records++
			res.lat.Add(time.Since(sent))
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.Flush(ctx); err != nil {
		return res, fmt.Errorf("flush: %w", err)
	}
	res.elapsed = time.Since(start)
	res.cpu = brokerCPU(c) - cpu0
	if n := errs.Load(); n > 0 {
		return res, fmt.Errorf("%d produce errors, first: %w", n, firstErr)
	}
	return res, nil
}

// produceCases: RF 1 and RF 3, acks=all, and their ratio.
func produceCases(c *kcluster.Cluster, replicated bool) {
	fmt.Printf("\n== franz-go produce, acks=all, idempotent, %d partitions, %v per case (closed loop)\n", partitions, *caseDur)
	fmt.Printf("%-22s %11s %9s %9s %9s %16s\n", "case", "records/s", "MB/s", "p50 ms", "p99 ms", "brokers CPU s/GB")
	row := func(name string, r produced) {
		fmt.Printf("%-22s %11.0f %9.1f %9s %9s %16.2f\n", name, float64(r.records)/r.elapsed.Seconds(), r.mbps(),
			benchkit.Ms(r.lat.Percentile(50)), benchkit.Ms(r.lat.Percentile(99)), r.cpuPerGB())
	}
	rf1, err := produce(c, "rf1")
	if err != nil {
		fmt.Printf("%-22s error: %v\n", "RF 1 acks=all", err)
		return
	}
	row("RF 1 acks=all", rf1)
	if !replicated {
		fmt.Printf("%-22s skipped: no replication\n", "RF 3 acks=all")
		return
	}
	rf3, err := produce(c, "rf3")
	if err != nil {
		fmt.Printf("%-22s error: %v\n", "RF 3 acks=all", err)
		return
	}
	row("RF 3 acks=all", rf3)
	ratio := rf3.mbps() / rf1.mbps()
	fmt.Printf("RF 3 / RF 1 throughput %.2f (target ≥ 0.51) %s\n", ratio, met(ratio >= 0.51))
	fmt.Printf("replication's broker CPU: %.2f s/GB (RF 3 %.2f − RF 1 %.2f, all three brokers)\n",
		rf3.cpuPerGB()-rf1.cpuPerGB(), rf3.cpuPerGB(), rf1.cpuPerGB())
}

// e2eCase produces at *e2eRate to a fresh RF 3 topic and consumes in the
// same process; each record carries its send time.
func e2eCase(c *kcluster.Cluster, replicated bool) {
	fmt.Printf("\n== end to end at %.0f MB/s, RF 3 acks=all, %d partitions, linger 0 (%v measured after 0.5 s)\n", *e2eRate/1e6, partitions, *e2eDur)
	if !replicated {
		fmt.Println("skipped: no replication")
		return
	}
	c.CreateTopic("e2e", partitions, 3, nil)
	lat, sent, err := endToEnd(c, "e2e")
	if err != nil {
		fmt.Printf("error: %v\n", err)
		return
	}
	p99 := lat.Percentile(99)
	fmt.Printf("%-10s %9s %9s %9s %9s %s\n", "MB/s sent", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "(p99 ≤ 10 ms)")
	fmt.Printf("%-10.1f %9s %9s %9s %9s %s\n", sent/1e6, benchkit.Ms(lat.Percentile(50)), benchkit.Ms(p99),
		benchkit.Ms(lat.Percentile(99.9)), benchkit.Ms(lat.Percentile(100)), met(p99 <= 10*time.Millisecond))
}

func endToEnd(c *kcluster.Cluster, topic string) (*benchkit.Latencies, float64, error) {
	prod, err := client(c, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	if err != nil {
		return nil, 0, err
	}
	defer prod.Close()
	cons, err := client(c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return nil, 0, err
	}
	defer cons.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var lat benchkit.Latencies
	var measured atomic.Int64
	var cerr error
	cdone := make(chan struct{})
	go func() {
		defer close(cdone)
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			now := time.Now()
			fs.EachError(func(_ string, _ int32, err error) {
				if ctx.Err() == nil {
					cerr = err
				}
			})
			fs.EachRecord(func(r *kgo.Record) {
				if binary.BigEndian.Uint64(r.Value[8:]) == 1 {
					lat.Add(now.Sub(time.Unix(0, int64(binary.BigEndian.Uint64(r.Value)))))
					measured.Add(1)
				}
			})
		}
	}()
	val := payload()
	perSec := *e2eRate / recSize
	start := time.Now()
	measureFrom, end := start.Add(500*time.Millisecond), start.Add(500*time.Millisecond+*e2eDur)
	var sent, want int64
	var perr atomic.Int64
	tick := time.NewTicker(time.Millisecond)
	for now := range tick.C {
		if now.After(end) {
			break
		}
		for due := int64(now.Sub(start).Seconds() * perSec); sent < due; sent++ {
			v := append([]byte(nil), val...)
			t := time.Now()
			binary.BigEndian.PutUint64(v, uint64(t.UnixNano()))
			if t.After(measureFrom) {
				binary.BigEndian.PutUint64(v[8:], 1)
				want++
			} else {
				binary.BigEndian.PutUint64(v[8:], 0)
			}
			prod.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
				if err != nil {
					perr.Add(1)
				}
			})
		}
	}
	tick.Stop()
	elapsed := time.Since(start)
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	prod.Flush(fctx)
	fcancel()
	kcluster.Poll(10*time.Second, func() bool { return measured.Load() >= want })
	cancel()
	<-cdone
	rate := float64(sent*recSize) / elapsed.Seconds()
	switch {
	case cerr != nil:
		return nil, rate, cerr
	case perr.Load() > 0:
		return nil, rate, fmt.Errorf("%d produce errors", perr.Load())
	case measured.Load() < want:
		return nil, rate, fmt.Errorf("consumed %d of %d measured records", measured.Load(), want)
	}
	return &lat, rate, nil
}
