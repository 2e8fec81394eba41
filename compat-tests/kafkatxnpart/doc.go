// Package kafkatxnpart drives the partition side of zkafka's Kafka
// transactions (KIP-98, KIP-890 part 1) with franz-go over real sockets:
// transactional batches produced with kmsg, COMMIT and ABORT markers
// written by the test playing the transaction coordinator
// (WriteTxnMarkers), and kgo read_committed consumers, raw read_committed
// fetches (last stable offset, aborted transactions), ListOffsets at both
// isolation levels and DescribeProducers against one broker and three;
// the .txnindex files and producer state across restarts and a leader's
// failover; the errors of bad markers and of unverified transactional
// produce.
package kafkatxnpart
