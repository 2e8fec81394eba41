package broker

import (
	"math"

	"github.com/zkafka/zkafka/kproto"
)

// Idempotent producers (KIP-98), per partition. Kafka keeps, per producer
// id, its epoch and the metadata of its last five batches
// (ProducerStateManager, ProducerAppendInfo.checkSequence):
//
//   - a batch equal (first and last sequence) to one of the five is a
//     retry: not appended again, answered with the original offset;
//   - an older epoch is fenced: INVALID_PRODUCER_EPOCH;
//   - a newer epoch must start at sequence 0: else OUT_OF_ORDER_SEQUENCE_NUMBER;
//   - the same epoch must continue at lastSeq+1 (wrapping after MaxInt32);
//   - an unknown producer (never seen, or its batches are gone) may start
//     at any sequence, as in Kafka since KIP-360.
//
// On open the state is the latest producer state snapshot
// (producer_snapshot.go) and the batch headers of the log after it.

// maxProducerBatches is how many batches per producer are remembered for
// duplicate detection (Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN).
const maxProducerBatches = 5

type producerBatch struct {
	firstSeq, lastSeq int32
	firstOffset       int64
	maxTimestamp      int64 // the batch's (for the snapshot's timestamp)
}

type producerState struct {
	epoch   int16
	batches [maxProducerBatches]producerBatch
	n       int // number of valid entries, oldest first
	// txnFirst is the first offset of the producer's open transaction,
	// -1 when none (Kafka's currentTxnFirstOffset; partition_txn.go).
	txnFirst int64
	// coordinatorEpoch is the coordinator epoch of the last marker, -1
	// before one; an older coordinator's marker is fenced.
	coordinatorEpoch int32
}

func newProducerState(epoch int16) *producerState {
	return &producerState{epoch: epoch, txnFirst: -1, coordinatorEpoch: -1}
}

func (s *producerState) last() *producerBatch {
	if s.n == 0 {
		return nil
	}
	return &s.batches[s.n-1]
}

func (s *producerState) push(b producerBatch) {
	if s.n == maxProducerBatches {
		copy(s.batches[:], s.batches[1:])
		s.n--
	}
	s.batches[s.n] = b
	s.n++
}

// lastSequence is the sequence of the batch's last record, wrapping as
// Kafka's DefaultRecordBatch.incrementSequence does.
func lastSequence(b kproto.Batch) int32 {
	first, delta := int64(b.BaseSequence()), int64(b.LastOffsetDelta())
	if first+delta > math.MaxInt32 {
		return int32(first + delta - math.MaxInt32 - 1)
	}
	return int32(first + delta)
}

func nextSequence(seq int32) int32 {
	if seq == math.MaxInt32 {
		return 0
	}
	return seq + 1
}

// checkProducerLocked validates b's producer fields. It returns the
// original batch for a duplicate, or an error code. p.mu must be held.
func (p *partition) checkProducerLocked(b kproto.Batch) (*producerBatch, kproto.ErrorCode) {
	pid := b.ProducerID()
	if pid < 0 {
		return nil, kproto.CodeNone
	}
	st := p.mu.producers[pid]
	if st == nil {
		return nil, kproto.CodeNone
	}
	epoch, first, last := b.ProducerEpoch(), b.BaseSequence(), lastSequence(b)
	switch {
	case epoch < st.epoch:
		return nil, kproto.CodeInvalidProducerEpoch
	case epoch > st.epoch:
		if first != 0 {
			return nil, kproto.CodeOutOfOrderSequenceNumber
		}
		return nil, kproto.CodeNone
	}
	for i := 0; i < st.n; i++ {
		if pb := &st.batches[i]; pb.firstSeq == first && pb.lastSeq == last {
			return pb, kproto.CodeNone
		}
	}
	if l := st.last(); l != nil && first != nextSequence(l.lastSeq) {
		return nil, kproto.CodeOutOfOrderSequenceNumber
	}
	return nil, kproto.CodeNone
}

// recordProducerLocked remembers an appended batch. p.mu must be held
// (or p not yet shared).
func (p *partition) recordProducerLocked(b kproto.Batch, base int64) {
	pid, epoch := b.ProducerID(), b.ProducerEpoch()
	st := p.mu.producers[pid]
	if st == nil {
		st = newProducerState(epoch)
		p.mu.producers[pid] = st
	}
	if epoch != st.epoch { // the open transaction and coordinator epoch stay, as Kafka's maybeUpdateProducerEpoch
		st.epoch, st.n = epoch, 0
	}
	st.push(producerBatch{firstSeq: b.BaseSequence(), lastSeq: lastSequence(b), firstOffset: base, maxTimestamp: b.MaxTimestamp()})
}
