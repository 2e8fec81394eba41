package broker

import "github.com/zkafka/zkafka/internal/javahash"

// The internal topic __transaction_state and which of its partitions
// holds a transactional id (Kafka's TransactionStateManager.partitionFor).
// A transactional id's coordinator is the leader of that partition, as a
// group's coordinator is the leader of its __consumer_offsets partition
// (offsets_topic.go). Partition leaders use the same function to find the
// coordinator they verify a transactional produce with (KIP-890).

const transactionTopic = "__transaction_state"

// transactionPartitionOf is the __transaction_state partition of
// transactionalID given n partitions: abs(String.hashCode(id)) % n.
func transactionPartitionOf(transactionalID string, n int) int32 {
	return kafkaAbs(javahash.String(transactionalID)) % int32(n)
}
