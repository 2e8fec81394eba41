// Command tlsbench measures what TLS costs zkafka's two servers, each a
// real process on 127.0.0.1 (`zkafka zookeeper zoo.cfg` and `zkafka
// broker server.properties`), in one run:
//
//   - Kafka: franz-go producing 1 KiB records (one partition, acks=1, no
//     compression) and then consuming them, on the broker's PLAINTEXT
//     listener and on its SSL listener (same broker, a PEM keystore made
//     for the run): MB/s, the SSL/PLAINTEXT ratio and the broker's CPU
//     seconds per GB (from /proc/<pid>/stat);
//
//   - ZooKeeper: getData of a 100-byte znode from go-zookeeper sessions on
//     clientPort and on secureClientPort of the same server: ops/s, the
//     ratio, and the server's CPU microseconds per op.
//
//     go run ./compat-tests/tlsbench -zkafka bin/zkafka
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

var (
	zkafkaBin  = flag.String("zkafka", "bin/zkafka", "zkafka binary")
	kafkaDur   = flag.Duration("kafka-dur", 3*time.Second, "duration of each produce case")
	kafkaMax   = flag.Int("kafka-records", 1500000, "record bound of each produce case")
	zkDur      = flag.Duration("zk-dur", 3*time.Second, "duration of each get case")
	zkSessions = flag.Int("zk-sessions", 16, "ZooKeeper sessions, one goroutine each")
	only       = flag.String("only", "", "kafka or zookeeper (default both)")
)

const recSize = 1024

func main() {
	flag.Parse()
	bin, err := filepath.Abs(*zkafkaBin)
	check(err)
	dir, err := os.MkdirTemp(".", "tlsbench-")
	check(err)
	dir, _ = filepath.Abs(dir)
	benchkit.AtExit(func() { os.RemoveAll(dir) })
	start := time.Now()
	keystore, caPool, err := writeKeystore(dir)
	check(err)
	s, err := startServers(bin, dir, keystore)
	check(err)
	benchkit.AtExit(s.stop)
	if *only == "" || *only == "kafka" {
		kafkaPart(s, caPool)
	}
	if *only == "" || *only == "zookeeper" {
		zooKeeperPart(s, caPool)
	}
	s.stop()
	fmt.Printf("\ntlsbench took %v\n", time.Since(start).Round(time.Second))
	benchkit.Exit(0)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlsbench:", err)
		benchkit.Exit(1)
	}
}
