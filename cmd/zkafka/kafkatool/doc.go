// Package kafkatool is zkafka's Kafka command line: the tools that people
// who run Kafka know as kafka-topics.sh, kafka-console-producer.sh, kcat,
// kafka-consumer-groups.sh and the perf tests, as cobra commands that
// cmd/zkafka's root adds with Commands():
//
//	topics   list | describe | create | alter | delete
//	produce  TOPIC   records from stdin or --file, with a partitioner by flag
//	consume  TOPIC   kcat-like --format; --zookeeper --group runs the
//	                 ZooKeeper-coordinated consumer (zkconsumer.go)
//	groups   list | describe | reset-offsets | delete
//	cluster  brokers, controller, ZooKeeper ensemble, unhealthy partitions
//	bench    produce | consume | zk   load generators with latency percentiles
//
// Every command takes --bootstrap-server HOST:PORT[,HOST:PORT] or
// --zookeeper HOST:PORT[,HOST:PORT][/chroot] as fits (with --zookeeper, the
// brokers are found under /brokers/ids and followed as they come and go),
// prints tables (go-pretty) for people and -o json for scripts, and fails
// with an error that the root prints as one line.
//
// Files: one per command (topics.go and topics_alter.go, produce.go,
// consume.go, groups.go, groups_reset.go and groups_zk.go, cluster.go and
// ensemble.go, bench.go and bench_zk.go), and the pieces they share:
// conn.go (flags, clients, broker discovery through ZooKeeper), output.go
// and progress.go (tables, JSON, the progress bar on a terminal),
// partitioner.go and murmur2.go (record placement), format.go (the kcat
// format), zkconsumer.go and assign.go (the ZooKeeper-coordinated
// consumer), latency.go (percentiles).
//
// The tests that run these commands against a real broker and ZooKeeper
// are in compat-tests/kafkatool (they need compat-tests/internal/kafkaenv).
package kafkatool

import "github.com/spf13/cobra"

// Commands returns the Kafka tools, for the root command to add.
func Commands() []*cobra.Command {
	return []*cobra.Command{
		topicsCmd(), produceCmd(), consumeCmd(), groupsCmd(), clusterCmd(), benchCmd(),
	}
}
