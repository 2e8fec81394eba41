// Package kafkaenv is the Kafka test environment that the compat-tests
// packages share, a thin layer over the public package zkafkatest (its
// first user): one ZooKeeper for the test binary (a zkafkatest cluster
// without brokers, or the one at ZKAFKA_TEST_ZK=host:port, for example
// Apache ZooKeeper), and per test a broker in a zkafkatest cluster on it
// (zkafkatest.ExternalZooKeeper) under its own chroot
// (zkafkatest.Chroot) and data directory, started with the test's own
// broker.Config (zkafkatest's Cluster.StartBroker: any listeners, each
// behind a link whose address, Addr and Addrs, stays across restarts),
// with franz-go clients (kgo, kadm), a go-zookeeper session and the
// broker's warnings and errors. Env.Cluster is the zkafkatest cluster, for
// its faults (Kill, Pause, Cut between brokers, interception).
//
//	func TestMain(m *testing.M) { kafkaenv.Main(m) }
//
//	func TestX(t *testing.T) {
//		e := kafkaenv.Start(t)
//		c := e.Client()
//		...
//	}
//
// Start returns once the broker is registered and its Metadata lists it
// (Metadata answers from the controller's UpdateMetadata requests).
// StartCluster starts n brokers (broker.id 1..n) in one zkafkatest
// cluster on one chroot, each with its own data directory, and waits until
// each lists all n; Stop is a controlled shutdown (with Kafka's defaults
// and Stop's 10 s the broker asks the controller once: a retry's 5 s
// backoff does not fit in the half of Shutdown's time the phase may take);
// Cluster.Seeds lists the running ones for kgo.SeedBrokers.
//
// Stopping a broker fails the test if it (or the quorum server) recovered
// from a panic: a recovered panic closes only one connection and clients
// retry, so a test would pass over it otherwise. Set ZKAFKA_TEST_LOG=1 to
// see the servers' logs on stderr.
//
// Two helpers are shared with tests that run their own brokers: KcatList
// (librdkafka's view of the cluster, `kcat -L -J`) and Acked (the records a
// producer has had acknowledged, waited on while a fault is injected).
package kafkaenv
