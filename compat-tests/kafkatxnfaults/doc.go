// Package kafkatxnfaults is issue 15's transaction checker, in the spirit of
// Jepsen's: a 3-broker cluster of real processes
// (compat-tests/internal/kcluster), four franz-go transactional producers
// each writing 2–5 records to random partitions of a 4-partition topic
// (RF 3) and committing its group's offset in the same transaction
// (AddOffsetsToTxn + TxnOffsetCommit), then committing or aborting at
// random; a read_committed consumer reading throughout. The faults run in
// phases, each killing (SIGKILL) and restarting a broker several times:
//
//	txn-coordinator    the leader of a producer's __transaction_state partition
//	partition-leader   the leader of a partition of the data topic
//	group-coordinator  the leader of a producer group's __consumer_offsets partition
//
// At the end, once every transaction has ended (LSO = HW), a fresh
// read_committed consumer reads the topic and Check (check.go, pure and
// unit-tested) holds every side's observations against each other: no
// aborted record read, no committed transaction read partially or twice
// or missing, an unknown outcome all or nothing, each group's offset that
// of its last committed transaction. The table is printed a row per
// phase:
//
//	go test -count=1 -v -run TestTransactionChecker ./compat-tests/kafkatxnfaults/
//
// ZKAFKA_TXN_CYCLES sets the kills per phase (default 3).
package kafkatxnfaults
