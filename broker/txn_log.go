package broker

import (
	"time"

	"github.com/zkafka/zkafka/broker/txn"
	"github.com/zkafka/zkafka/kproto"
)

// The transaction log: each state change of a transactional id is one
// record (txn.EncodeKey / txn.EncodeValue) appended to the id's
// partition of __transaction_state, acknowledged once the high watermark
// passes it (acks=all; min.insync.replicas of the topic). A new leader of
// the partition reads its log from the start (the latest record of an id
// wins, a tombstone forgets it) before it answers for those ids.

// txnAppendTimeout bounds the wait for replication of one record
// (Kafka's transaction.state.log write uses request.timeout.ms).
const txnAppendTimeout = 30 * time.Second

// appendRecord appends id's metadata m to tp and waits until it is
// committed. Its code is the coordinator's (Kafka's
// TransactionStateManager.appendTransactionToLog): NOT_COORDINATOR when
// leadership moved, COORDINATOR_NOT_AVAILABLE when the ISR is too small
// or replication timed out.
func (c *txnCoordinator) appendRecord(tp *txnPartition, id string, m txn.Metadata, now time.Time) kproto.ErrorCode {
	t := c.b.cluster.topic(transactionTopic)
	if t == nil {
		return kproto.CodeNotCoordinator
	}
	part := t.partition(tp.index)
	if part == nil || part.leaderEpoch.Load() != tp.epoch {
		return kproto.CodeNotCoordinator
	}
	minISR := c.b.minInsyncReplicas(t)
	if part.isrSize() < minISR {
		return kproto.CodeCoordinatorNotAvailable
	}
	ms := now.UnixMilli()
	rec := kproto.AppendRecord(nil, 0, 0, txn.EncodeKey(id), txn.EncodeValue(m), 0, nil)
	batch := kproto.AppendBatch(nil, kproto.BatchHeader{FirstTimestamp: ms, MaxTimestamp: ms,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 1}, rec)
	res := part.appendBatch(kproto.Batch(batch), now)
	switch res.code {
	case kproto.CodeNone:
	case kproto.CodeNotLeaderOrFollower, kproto.CodeKafkaStorageError:
		return kproto.CodeNotCoordinator
	default:
		return kproto.CodeCoordinatorNotAvailable
	}
	switch part.waitCommitted(res.baseOffset+1, minISR, now.Add(txnAppendTimeout), c.b.done) {
	case kproto.CodeNone:
		return kproto.CodeNone
	case kproto.CodeNotLeaderOrFollower:
		return kproto.CodeNotCoordinator
	default:
		return kproto.CodeCoordinatorNotAvailable
	}
}

// load reads tp's log and publishes its transactions, then completes the
// ones left in a Prepare state by sending their markers again.
func (c *txnCoordinator) load(tp *txnPartition) {
	t := c.b.cluster.topic(transactionTopic)
	var part *partition
	if t != nil {
		part = t.partition(tp.index)
	}
	if part == nil {
		return // no longer led; the next leadership change decides
	}
	txns, err := readTxnLog(part)
	if err != nil {
		c.b.log.Warn("loading "+transactionTopic, "partition", tp.index, "err", err)
	}
	var prepared []string
	c.mu.Lock()
	if !c.currentLocked(tp) {
		c.mu.Unlock()
		return
	}
	for id, m := range txns {
		tp.txns[id] = &txn.Txn{ID: id, Cur: *m}
		if m.State == txn.PrepareCommit || m.State == txn.PrepareAbort {
			prepared = append(prepared, id)
		}
	}
	tp.loading = false
	c.mu.Unlock()
	c.b.log.Info("transaction coordinator loaded", "partition", tp.index, "epoch", tp.epoch, "transactions", len(txns), "to_complete", len(prepared))
	for _, id := range prepared {
		c.startMarkers(tp, id)
	}
}

// readTxnLog reads a partition of __transaction_state from its start to
// its end: the latest metadata of each id.
func readTxnLog(part *partition) (map[string]*txn.Metadata, error) {
	out := map[string]*txn.Metadata{}
	end := part.log.NextOffset()
	var buf, scratch []byte
	for off := part.log.StartOffset(); off < end; {
		var err error
		buf, err = part.log.ReadBatches(off, 1<<20, buf[:0])
		if err != nil {
			return out, err
		}
		if len(buf) == 0 {
			break
		}
		it := kproto.SplitBatches(buf)
		next := off
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			next = b.LastOffset() + 1
			if b.Control() || b.Magic() != 2 {
				continue
			}
			recs, err := kproto.Records(b, scratch)
			scratch = recs.Scratch()
			if err != nil {
				return out, err
			}
			for r, ok := recs.Next(); ok; r, ok = recs.Next() {
				id, m, err := txn.Decode(r.Key, r.Value)
				if err != nil {
					continue // not a transaction record (Kafka skips unknown keys too)
				}
				if m == nil {
					delete(out, id)
				} else {
					out[id] = m
				}
			}
		}
		if next <= off {
			break
		}
		off = next
	}
	return out, nil
}
