// Package kafkagroups drives zkafka's group coordinator with franz-go (kgo
// consumer groups, kadm, raw kmsg requests) over real sockets: an
// in-process ZooKeeper (quorum) and broker on 127.0.0.1 port 0, each test
// under its own chroot. It checks consumer-group semantics (every record
// read once by one member, rebalances on join, leave and session expiry,
// committed offsets across consumer and broker restarts, eager and
// cooperative assignors, static membership), the admin APIs, Kafka's
// error codes, and the znodes under /consumers. Set ZKAFKA_TEST_ZK to use
// another ZooKeeper. compat-part.sh adds kcat, kafka-python and
// confluent-kafka to `make compat`; cmd/groupbroker starts a broker for
// them and for scripts/bench.d/30-groups.sh (cmd/groupbench).
package kafkagroups
