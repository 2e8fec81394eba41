// Package txn is the transaction coordinator's state machine (KIP-98),
// pure: no IO, no clock, no locks. The broker's shell (broker/txn_*.go)
// owns a Txn per transactional id, feeds it requests, timer ticks and
// acknowledgements with the time passed in, and carries out what each
// Step asks: append Step.Write to the id's partition of
// __transaction_state and, once the high watermark passes it, Apply it;
// send the transaction markers of a Prepare state to the partition
// leaders, then feed MarkersDone.
//
// The states and transitions are Kafka 3.7's TransactionMetadata:
//
//	          InitProducerId            AddPartitions/AddOffsets
//	(none) ───────────────▶ Empty ─────────────────────────▶ Ongoing ◀─┐ more partitions
//	                          ▲                                 │  └────┘
//	                          │ InitProducerId     EndTxn commit│abort, timeout, fence
//	                          │                                 ▼
//	       CompleteCommit/CompleteAbort ◀── markers written ── PrepareCommit/PrepareAbort
//	                          │
//	                          │ transactional.id.expiration.ms idle
//	                          ▼
//	                        Dead (tombstone; forgotten)
//
// PrepareEpochFence is, as in Kafka, never written: an InitProducerId
// or a timeout that finds a transaction Ongoing bumps the epoch (fencing
// the old producer) and writes PrepareAbort with the bumped epoch.
//
// A Txn has at most one write in flight (Pending); every request that
// arrives meanwhile is answered CONCURRENT_TRANSACTIONS, as Kafka's
// pendingState. The records are Kafka's TransactionLogKey and
// TransactionLogValue version 0 (record.go).
package txn
