// Package kafkaenv is the Kafka test environment that the compat-tests
// packages kafkago and kafkagroups share: one ZooKeeper for the test binary
// (zkafka's quorum server in process on 127.0.0.1 port 0, or the one at
// ZKAFKA_TEST_ZK=host:port, for example Apache ZooKeeper), and per test a
// broker on 127.0.0.1 port 0 under its own chroot and data directory, with
// franz-go clients (kgo, kadm), a go-zookeeper session and the broker's
// warnings and errors.
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
// StartCluster starts n brokers (broker.id 1..n) on one chroot, each with
// its own data directory, and waits until each lists all n; Stop is a
// controlled shutdown (with Kafka's defaults and Stop's 10 s the broker
// asks the controller once: a retry's 5 s backoff does not fit in the half
// of Shutdown's time the phase may take); Cluster.Seeds lists the running
// ones for kgo.SeedBrokers.
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
