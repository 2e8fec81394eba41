package zkafkatest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/zkafkatest"
)

// BenchmarkStart measures the start of a cluster until a franz-go
// client's first produce is acked, and its close, beside franz-go's
// kfake.NewCluster (in memory, no ZooKeeper, nothing on disk):
//
//	go test -run '^$' -bench BenchmarkStart -benchtime 20x ./zkafkatest/
func BenchmarkStart(b *testing.B) {
	for _, bc := range []struct {
		name  string
		start func(b *testing.B, brokers int) (seeds []string, stop func())
	}{
		{"zkafkatest", startZkafkatest},
		{"kfake", startKfake},
	} {
		for _, n := range []int{1, 3} {
			b.Run(fmt.Sprintf("%s/brokers=%d", bc.name, n), func(b *testing.B) {
				for b.Loop() {
					seeds, stop := bc.start(b, n)
					produceOnce(b, seeds)
					stop()
				}
			})
		}
	}
}

func startZkafkatest(b *testing.B, n int) ([]string, func()) {
	cl, err := zkafkatest.Start(zkafkatest.Brokers(n), zkafkatest.DataDir(b.TempDir()), zkafkatest.Topic("t", 1, 1))
	if err != nil {
		b.Fatal(err)
	}
	return cl.Seeds(), func() { cl.Close() }
}

func startKfake(b *testing.B, n int) ([]string, func()) {
	c, err := kfake.NewCluster(kfake.NumBrokers(n), kfake.SeedTopics(1, "t"))
	if err != nil {
		b.Fatal(err)
	}
	return c.ListenAddrs(), c.Close
}

func produceOnce(b *testing.B, seeds []string) {
	c, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr(); err != nil {
		b.Fatal(err)
	}
}
