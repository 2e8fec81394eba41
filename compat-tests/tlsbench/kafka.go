package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

// kafkaCase is one listener's produce and consume figures.
type kafkaCase struct {
	produceMB, consumeMB   float64 // MB/s of values
	produceCPU, consumeCPU float64 // broker CPU s per GB
	records                int64
}

// kafkaPart runs produce then consume on PLAINTEXT and on SSL and prints
// the table and the ratios.
func kafkaPart(s *servers, pool *x509.CertPool) {
	fmt.Printf("== Kafka: franz-go, 1 KiB records, 1 partition, acks=1, no compression; produce %v (≤ %d records), then consume them all\n", *kafkaDur, *kafkaMax)
	fmt.Printf("%-12s %12s %14s %12s %14s\n", "listener", "produce MB/s", "broker s/GB", "consume MB/s", "broker s/GB")
	tlsCfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	var res [2]kafkaCase
	for i, c := range []struct {
		name, addr string
		opts       []kgo.Opt
	}{
		{"PLAINTEXT", s.kafkaPlain, nil},
		{"SSL", s.kafkaTLS, []kgo.Opt{kgo.DialTLSConfig(tlsCfg)}},
	} {
		r, err := kafkaRun(s.broker.Pid(), c.addr, "tls-bench-"+c.name, c.opts)
		check(err)
		res[i] = r
		fmt.Printf("%-12s %12.1f %14.2f %12.1f %14.2f\n", c.name, r.produceMB, r.produceCPU, r.consumeMB, r.consumeCPU)
	}
	fmt.Printf("SSL / PLAINTEXT: produce %.2f (CPU/GB ×%.2f), consume %.2f (CPU/GB ×%.2f)\n\n",
		res[1].produceMB/res[0].produceMB, res[1].produceCPU/res[0].produceCPU,
		res[1].consumeMB/res[0].consumeMB, res[1].consumeCPU/res[0].consumeCPU)
}

func kafkaRun(pid int, addr, topic string, opts []kgo.Opt) (kafkaCase, error) {
	var out kafkaCase
	base := append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("tlsbench")}, opts...)
	adm, err := kgo.NewClient(base...)
	if err != nil {
		return out, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if r, err := kadm.NewClient(adm).CreateTopic(ctx, 1, 1, nil, topic); err != nil || r.Err != nil {
		adm.Close()
		return out, fmt.Errorf("create %s: %v %v", topic, err, r.Err)
	}
	adm.Close()
	syscall.Sync()

	p, err := kgo.NewClient(append(base, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()))...)
	if err != nil {
		return out, err
	}
	val := make([]byte, recSize)
	for i := range val {
		val[i] = byte('a' + i%26)
	}
	var failed error
	cpu0, _ := benchkit.CPUTime(pid)
	start := time.Now()
	end := start.Add(*kafkaDur)
	n := 0
	for ; n < *kafkaMax && (n%64 != 0 || time.Now().Before(end)); n++ {
		p.Produce(ctx, &kgo.Record{Value: val}, func(_ *kgo.Record, err error) {
			if err != nil && failed == nil {
				failed = err
			}
		})
	}
	if err := p.Flush(ctx); err != nil {
		p.Close()
		return out, err
	}
	elapsed := time.Since(start)
	cpu1, _ := benchkit.CPUTime(pid)
	p.Close()
	if failed != nil {
		return out, fmt.Errorf("produce: %w", failed)
	}
	gb := float64(n) * recSize / 1e9
	out.records = int64(n)
	out.produceMB = float64(n) * recSize / elapsed.Seconds() / 1e6
	out.produceCPU = (cpu1 - cpu0).Seconds() / gb
	syscall.Sync()

	c, err := kgo.NewClient(append(base, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		return out, err
	}
	defer c.Close()
	cpu0, _ = benchkit.CPUTime(pid)
	start = time.Now()
	var got int64
	for got < out.records {
		fs := c.PollFetches(ctx)
		if ctx.Err() != nil {
			return out, fmt.Errorf("consumed %d of %d records", got, out.records)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return out, fmt.Errorf("fetch: %v", errs[0].Err)
		}
		got += int64(fs.NumRecords())
	}
	elapsed = time.Since(start)
	cpu1, _ = benchkit.CPUTime(pid)
	out.consumeMB = float64(got) * recSize / elapsed.Seconds() / 1e6
	out.consumeCPU = (cpu1 - cpu0).Seconds() / gb
	return out, nil
}
