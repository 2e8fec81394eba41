// Package kafkatool tests zkafka's Kafka tools (cmd/zkafka/kafkatool) by
// running their cobra commands against a real broker and ZooKeeper in
// process (compat-tests/internal/kafkaenv), as a person runs them.
package kafkatool
