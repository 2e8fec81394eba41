// Package kafkago drives zkafka's Kafka broker with franz-go (kgo, kadm and
// raw kmsg requests) over real sockets: an in-process ZooKeeper (quorum)
// and broker on 127.0.0.1 port 0. Set ZKAFKA_TEST_ZK=host:port to run the
// same tests against another ZooKeeper (for example Apache ZooKeeper).
package kafkago
