// Command kafkaclusterbench measures replication on a 3-broker zkafka
// cluster of real processes (compat-tests/internal/kcluster: `zkafka
// zookeeper` and three `zkafka broker`, min.insync.replicas 2,
// zookeeper.session.timeout.ms 4000) and prints, side by side in one run:
//
//   - franz-go acks=all produce of 1 KiB records to 8 partitions, RF 3
//     against RF 1 on the same cluster, and their ratio (target ≥ 0.51,
//     what Kafka's own benchmark kept with 3× synchronous replication);
//     the brokers' CPU seconds per GB for each and the difference, the CPU
//     that replication costs;
//   - end-to-end latency at 20 MB/s, RF 3 acks=all (target p99 ≤ 10 ms);
//   - failover: kill -9 of a leader to the first acknowledged write on
//     each of its partitions, median of -failovers (target ≤
//     zookeeper.session.timeout.ms + 1 s);
//   - controlled shutdown: SIGTERM of a leader until no partition state
//     names it (target ≤ 1 s);
//   - OffsetCommit throughput, 1 and 8 committers, on the cluster and on a
//     single broker started after it, and their ratio (commit.go).
//
// RF 3 cases need replication (issue 10); without it (the ISR stays the
// leader alone) they are reported as skipped.
//
//	go run ./compat-tests/kafkaclusterbench -zkafka bin/zkafka
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
)

var (
	zkafkaBin = flag.String("zkafka", "bin/zkafka", "zkafka binary")
	caseDur   = flag.Duration("dur", 3*time.Second, "duration of each produce case")
	caseMax   = flag.Int("max-records", 1000000, "record bound of each produce case (1 GB; RF 3 keeps three copies on this disk)")
	e2eRate   = flag.Float64("e2e-rate", 20e6, "end-to-end produce rate, bytes/s")
	e2eDur    = flag.Duration("e2e-dur", 4*time.Second, "end-to-end measured duration")
	failovers = flag.Int("failovers", 10, "kill -9 failovers to measure")
	shutdowns = flag.Int("shutdowns", 3, "controlled shutdowns to measure")
	only      = flag.String("only", "", "comma-separated parts: produce,e2e,failover,shutdown,commit (default all)")
)

const (
	recSize    = 1024
	partitions = 8
)

func main() {
	flag.Parse()
	want := func(p string) bool { return *only == "" || strings.Contains(","+*only+",", ","+p+",") }
	bin, err := filepath.Abs(*zkafkaBin)
	if err != nil {
		kcluster.Runner{}.Fatalf("%v", err)
	}
	dir, err := os.MkdirTemp(".", "kafkaclusterbench-")
	if err != nil {
		kcluster.Runner{}.Fatalf("%v", err)
	}
	benchkit.AtExit(func() { os.RemoveAll(dir) })
	start := time.Now()
	c := kcluster.Start(kcluster.Runner{}, kcluster.Options{Bin: bin, Dir: dir, LogLevel: "warn"})
	fmt.Printf("3 brokers (processes) on zkafka zookeeper, min.insync.replicas %d, zookeeper.session.timeout.ms %d; 1 KiB records, %d partitions\n",
		c.Opts.MinISR, c.Opts.SessionTimeout.Milliseconds(), partitions)
	c.CreateTopic("rf3", partitions, 3, nil)
	one := "1"
	c.CreateTopic("rf1", partitions, 1, map[string]*string{"min.insync.replicas": &one})
	replicated := fullISR(c, "rf3", partitions, 3, 15*time.Second)
	if !replicated {
		s, _ := c.State("rf3", 0)
		fmt.Printf("replication is not running (ISR of rf3-0 is %v after 15 s, want 3 replicas): RF 3 cases skipped\n", s.ISR)
	}
	if want("produce") {
		produceCases(c, replicated)
	}
	if want("e2e") {
		e2eCase(c, replicated)
	}
	if want("failover") {
		failoverCase(c, replicated)
	}
	if want("shutdown") {
		shutdownCase(c, replicated)
	}
	if want("commit") {
		commitCase(c, bin, dir)
	}
	fmt.Printf("\nkafkaclusterbench took %v\n", time.Since(start).Round(time.Second))
	benchkit.Exit(0)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// fullISR waits until every partition of topic has an ISR of rf.
func fullISR(c *kcluster.Cluster, topic string, parts int32, rf int, timeout time.Duration) bool {
	return kcluster.Poll(timeout, func() bool {
		for p := range parts {
			if s, err := c.State(topic, p); err != nil || len(s.ISR) != rf {
				return false
			}
		}
		return len(c.Registered()) == len(c.Brokers)
	})
}

// brokerCPU is the CPU time all running brokers have used.
func brokerCPU(c *kcluster.Cluster) time.Duration {
	var sum time.Duration
	for _, b := range c.Brokers {
		if pid := b.Pid(); pid != 0 && b.Running() {
			d, _ := benchkit.CPUTime(pid)
			sum += d
		}
	}
	return sum
}
