// Package kcluster runs a Kafka cluster of real processes for fault tests
// and cluster benchmarks: `zkafka zookeeper zoo.cfg` and N `zkafka broker
// server.properties` (broker.id 1..N) from bin/zkafka ($ZKAFKA_BIN; Main
// builds it from this tree when unset), each in its own process group on
// 127.0.0.1, with configs it writes:
//
//	listeners=PLAINTEXT://127.0.0.1:<client>,REPLICATION://127.0.0.1:<repl>
//	advertised.listeners=PLAINTEXT://127.0.0.1:<client>,REPLICATION://127.0.0.1:<proxy>
//	listener.security.protocol.map=PLAINTEXT:PLAINTEXT,REPLICATION:PLAINTEXT
//	inter.broker.listener.name=REPLICATION
//	zookeeper.session.timeout.ms=4000  replica.lag.time.max.ms=3000
//	min.insync.replicas=2  default.replication.factor=3
//
// Clients use PLAINTEXT. Every other broker reaches broker i on its
// REPLICATION listener through Broker.Proxy, a faultproxy.Proxy (Kafka
// mode) that the harness keeps across restarts, so a test can cut one
// broker's replica fetches (Proxy.CutReplica(F, ...) on every other
// broker's proxy) without touching the processes.
//
//	               PLAINTEXT (clients)
//	client ────────────────────────────▶ broker 1 :client
//	broker 2/3 ──▶ proxy 1 :proxy ─────▶ broker 1 :repl  (fetches,
//	               (cut / blackhole /              controller requests)
//	                delay here)
//
// Process control: Kill9, Pause (SIGSTOP), Resume (SIGCONT), Term
// (SIGTERM, a controlled shutdown), Restart (same config and data dir).
// The cluster's state is read from ZooKeeper as Kafka's tools read it:
// Controller from /controller, State (leader, leader_epoch, isr) from
// /brokers/topics/{t}/partitions/{p}/state, Registered from /brokers/ids.
//
// With Options.ZooKeeper (or $ZKAFKA_TEST_ZK) the brokers use that
// ensemble instead, for example Apache ZooKeeper, under a chroot of their
// own; Cluster.Chroot names it.
//
// A Cluster is driven through T (a testing.TB, or Runner for a program
// such as a benchmark); a failure calls T.Fatalf with the broker's log
// tail. Every process is killed at cleanup.
package kcluster
