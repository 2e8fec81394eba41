// Package kafkatxn tests the transaction coordinator with franz-go over
// real sockets: each transaction API's errors at the kmsg level
// (out-of-order requests, stale epochs, another producer holding the
// transactional id, offsets for a group not added, verification of
// KIP-890), the coordinator's failover (the leader of the id's
// __transaction_state partition stopped with a transaction in
// PrepareCommit: the next leader loads it and writes the markers; the
// same leader in a new leader epoch, whose sender of the old epoch must
// not complete it while the new one still has a marker to write), and
// kgo's transactional producer and GroupTransactSession end to end, on 1
// and 3 brokers. compat-part.sh adds franz-go's own TestTxnEtl against
// `zkafka run` with 1 and 3 brokers to `make compat`.
package kafkatxn
