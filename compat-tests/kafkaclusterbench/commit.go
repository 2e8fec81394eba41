package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
)

// The OffsetCommit case (issue 11): franz-go (kadm.CommitOffsets, an
// OffsetCommit of one partition with generation -1, as a simple consumer
// commits) in closed loops, one group per loop, against the 3-broker
// cluster and then against a single broker started for the comparison
// (its own `zkafka zookeeper`, RF 1). A commit is a ZooKeeper multi
// (/consumers/{group}/offsets) and an append to __consumer_offsets (RF 3
// on the cluster, acks of its ISR), so the ratio is what the replicated
// offsets topic costs. Each loop is bounded by -commit-dur and
// -commit-max.

var (
	commitDur = flag.Duration("commit-dur", 3*time.Second, "duration of each OffsetCommit case")
	commitMax = flag.Int("commit-max", 200000, "commit bound of each OffsetCommit loop")
)

// commitResult is one case's commits and their latencies.
type commitResult struct {
	commits int
	elapsed time.Duration
	lat     benchkit.Latencies
}

func (r commitResult) rate() float64 { return float64(r.commits) / r.elapsed.Seconds() }

// commitLoops runs loops closed loops of commits on seeds, after one warm
// commit per group (the first FindCoordinator creates __consumer_offsets).
func commitLoops(seeds []string, loops int, tag string) (commitResult, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ClientID("kafkaclusterbench-commit"))
	if err != nil {
		return commitResult{}, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	group := func(i int) string { return fmt.Sprintf("bench-%s-%d", tag, i) }
	commit := func(ctx context.Context, g string, off int64) error {
		var o kadm.Offsets
		o.Add(kadm.Offset{Topic: "rf1", Partition: 0, At: off, LeaderEpoch: -1})
		resp, err := adm.CommitOffsets(ctx, g, o)
		if err != nil {
			return err
		}
		return resp.Error()
	}
	for i := range loops {
		ok := kcluster.Poll(60*time.Second, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return commit(ctx, group(i), 0) == nil
		})
		if !ok {
			return commitResult{}, fmt.Errorf("group %s: no commit succeeded within 60 s", group(i))
		}
	}
	var mu sync.Mutex
	var res commitResult
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(*commitDur)
	for i := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat benchkit.Latencies
			n := 0
			for ; n < *commitMax && time.Now().Before(end); n++ {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				t0 := time.Now()
				err := commit(ctx, group(i), int64(n+1))
				cancel()
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				lat.Add(time.Since(t0))
			}
			mu.Lock()
			res.commits += n
			res.lat.Merge(&lat)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res, firstErr
}

// commitCase prints OffsetCommit throughput on the cluster and on a single
// broker, and their ratio, for 1 and 8 concurrent committers.
func commitCase(c *kcluster.Cluster, bin, dir string) {
	fmt.Printf("\n== OffsetCommit, franz-go kadm.CommitOffsets closed loops (one group each), %v per case\n", *commitDur)
	loops := []int{1, 8}
	three := map[int]commitResult{}
	for _, n := range loops {
		r, err := commitLoops(c.Seeds(), n, fmt.Sprintf("c%d", n))
		if err != nil {
			fmt.Printf("3 brokers, %d loops: error: %v\n", n, err)
			return
		}
		three[n] = r
	}
	single := kcluster.Start(kcluster.Runner{}, kcluster.Options{Bin: bin, Dir: filepath.Join(dir, "single"), Brokers: 1,
		RF: 1, MinISR: 1, LogLevel: "warn", Props: map[string]string{"offsets.topic.replication.factor": "1"}})
	single.CreateTopic("rf1", 1, 1, nil)
	fmt.Printf("%-26s %10s %9s %9s\n", "case", "commits/s", "p50 ms", "p99 ms")
	for _, n := range loops {
		one, err := commitLoops(single.Seeds(), n, fmt.Sprintf("s%d", n))
		if err != nil {
			fmt.Printf("1 broker, %d loops: error: %v\n", n, err)
			return
		}
		for _, row := range []struct {
			name string
			r    commitResult
		}{{fmt.Sprintf("3 brokers, %d loop(s)", n), three[n]}, {fmt.Sprintf("1 broker, %d loop(s)", n), one}} {
			fmt.Printf("%-26s %10.0f %9s %9s\n", row.name, row.r.rate(),
				benchkit.Ms(row.r.lat.Percentile(50)), benchkit.Ms(row.r.lat.Percentile(99)))
		}
		fmt.Printf("3 brokers / 1 broker, %d loop(s): %s\n", n, benchkit.Ratio(three[n].rate(), one.rate()))
	}
}
