package replication

import (
	"context"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// BenchmarkProduceAcksAll: franz-go writes 1 KiB records with acks=all to
// 8 partitions of an RF 1 and an RF 3 topic on the same three in-process
// brokers; it reports MB/s and the process's CPU seconds per GB written
// (brokers and client together: they share the process).
//
//	go test -run '^$' -bench ProduceAcksAll -benchtime 20000x ./compat-tests/replication/
func BenchmarkProduceAcksAll(b *testing.B) {
	cl := kafkaenv.StartCluster(b, 3, fastReplication(30*time.Second))
	for _, rf := range []int16{1, 3} {
		name := "rf" + string(rune('0'+rf))
		createTopic(b, cl, name, 8, rf, nil)
		b.Run(name, func(b *testing.B) {
			p := client(b, cl, kgo.DefaultProduceTopic(name), kgo.RequiredAcks(kgo.AllISRAcks()),
				kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(1<<16))
			value := make([]byte, 1024)
			ctx := context.Background()
			var wg sync.WaitGroup
			var failed error
			var mu sync.Mutex
			cpu0 := cpuSeconds()
			b.SetBytes(1024)
			b.ResetTimer()
			for range b.N {
				wg.Add(1)
				p.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						mu.Lock()
						failed = err
						mu.Unlock()
					}
					wg.Done()
				})
			}
			wg.Wait()
			b.StopTimer()
			if failed != nil {
				b.Fatal(failed)
			}
			gb := float64(b.N) * 1024 / 1e9
			b.ReportMetric((cpuSeconds()-cpu0)/gb, "cpu-s/GB")
		})
	}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkProduceLatencyAcksAll: one 1 KiB record at a time, acks=all,
// RF 1 and RF 3: the produce round trip's p50 and p99 (with RF 3 it
// includes a follower fetch round trip).
//
//	go test -run '^$' -bench ProduceLatencyAcksAll -benchtime 2000x ./compat-tests/replication/
func BenchmarkProduceLatencyAcksAll(b *testing.B) {
	cl := kafkaenv.StartCluster(b, 3, fastReplication(30*time.Second))
	for _, rf := range []int16{1, 3} {
		name := "lat-rf" + string(rune('0'+rf))
		createTopic(b, cl, name, 1, rf, nil)
		b.Run(name, func(b *testing.B) {
			p := client(b, cl, kgo.DefaultProduceTopic(name), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
			value := make([]byte, 1024)
			ctx := context.Background()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if err := p.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
