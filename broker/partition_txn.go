package broker

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// Transactions on a partition (KIP-98), as Kafka's ProducerStateManager
// and UnifiedLog keep them:
//
//   - a transactional batch of a producer with no transaction open starts
//     one at its base offset (producerState.txnFirst);
//   - a COMMIT or ABORT marker (a control batch the coordinator has the
//     leader write, WriteTxnMarkers) ends it; an ABORT adds an entry to
//     the aborted-transaction index (segment's .txnindex) of the segment
//     holding the marker, with the last stable offset the partition has
//     once the transaction is gone;
//   - a completed transaction stays unstable until the high watermark
//     passes its marker (Kafka's unreplicatedTxns);
//   - the last stable offset is min(first offset of the unstable
//     transactions, high watermark): read_committed fetches and
//     ListOffsets stop there.
//
// Followers apply the same rules to the batches they replicate (markers
// included), and a restart to the batches after the producer snapshot, so
// a new leader has the same open transactions and aborted index.
//
// The control batch: attributes transactional|control, base sequence -1,
// one record whose key is version int16 (0) | type int16 (0 abort,
// 1 commit) and value (EndTransactionMarker) version int16 (0) |
// coordinator_epoch int32.

const (
	markerAbort  = 0
	markerCommit = 1
)

var codeTransactionCoordinatorFenced = kproto.ErrorCode(kerr.TransactionCoordinatorFenced.Code)

// unstableTxn is a completed transaction the high watermark has not
// passed yet.
type unstableTxn struct{ first, last int64 }

// markerBatch is the control batch of a COMMIT or ABORT of producer
// (pid, epoch) written by a coordinator in coordinatorEpoch.
func markerBatch(pid int64, epoch int16, coordinatorEpoch int32, commit bool, ms int64) kproto.Batch {
	kind := uint16(markerAbort)
	if commit {
		kind = markerCommit
	}
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), kind)
	value := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), uint32(coordinatorEpoch))
	rec := kproto.AppendRecord(nil, 0, 0, key, value, 0, nil)
	return kproto.Batch(kproto.AppendBatch(nil, kproto.BatchHeader{
		Attributes: kproto.AttrTransactional | kproto.AttrControl, FirstTimestamp: ms, MaxTimestamp: ms,
		ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, NumRecords: 1}, rec))
}

// parseMarker reads a control batch's record: its type (markerAbort,
// markerCommit, or another control type) and the coordinator epoch.
// ok is false when it holds no transaction marker.
func parseMarker(b kproto.Batch) (kind int16, coordinatorEpoch int32, ok bool) {
	it, err := kproto.Records(b, nil)
	if err != nil {
		return 0, 0, false
	}
	r, more := it.Next()
	if !more || len(r.Key) < 4 {
		return 0, 0, false
	}
	kind = int16(binary.BigEndian.Uint16(r.Key[2:]))
	if kind != markerAbort && kind != markerCommit {
		return kind, 0, false
	}
	if len(r.Value) >= 6 {
		coordinatorEpoch = int32(binary.BigEndian.Uint32(r.Value[2:]))
	}
	return kind, coordinatorEpoch, true
}

// recordBatchLocked applies an appended batch (at base) to the producer
// state: data batches as recordProducerLocked, transactional ones opening
// a transaction, markers ending one. b must be the whole batch when it is
// a control batch (only its header otherwise). p.mu must be held (or p not
// yet shared).
func (p *partition) recordBatchLocked(b kproto.Batch, base int64) {
	if b.ProducerID() < 0 {
		return
	}
	if b.Control() {
		switch kind, ce, ok := parseMarker(b); {
		case ok:
			p.completeTxnLocked(b.ProducerID(), b.ProducerEpoch(), ce, base, kind == markerCommit)
		case b.NumRecords() == 0:
			// A marker the cleaner emptied: its whole transaction was
			// cleaned away (Kafka's ProducerAppendInfo says the same), so
			// it ends what a snapshot below it still has open.
			ce := int32(-1)
			if st := p.mu.producers[b.ProducerID()]; st != nil {
				ce = st.coordinatorEpoch
			}
			p.completeTxnLocked(b.ProducerID(), b.ProducerEpoch(), ce, base, true)
		}
		return
	}
	p.recordProducerLocked(b, base)
	if b.Transactional() {
		st := p.mu.producers[b.ProducerID()]
		if st.txnFirst < 0 {
			st.txnFirst = base
			delete(p.mu.verified, b.ProducerID())
			if base < p.firstUnstable.Load() {
				p.firstUnstable.Store(base)
			}
		}
	}
}

// completeTxnLocked ends producer pid's transaction at its marker (Kafka's
// ProducerAppendInfo.appendEndTxnMarker and UnifiedLog's txn index
// update). A marker for a producer with no open transaction completes
// nothing (it is in the log all the same). p.mu must be held.
func (p *partition) completeTxnLocked(pid int64, epoch int16, coordinatorEpoch int32, marker int64, commit bool) {
	st := p.mu.producers[pid]
	if st == nil {
		st = newProducerState(epoch)
		p.mu.producers[pid] = st
	}
	if epoch != st.epoch { // an abort by a coordinator that bumped the epoch
		st.epoch, st.n = epoch, 0
	}
	first := st.txnFirst
	st.txnFirst, st.coordinatorEpoch = -1, coordinatorEpoch
	delete(p.mu.verified, pid)
	if first < 0 {
		return
	}
	if !commit {
		e := segment.AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: marker, LastStableOffset: p.lsoAfterLocked(pid, marker)}
		if err := p.log.AppendAbortedTxn(e); err != nil && p.logger != nil {
			p.logger.Error("writing the aborted transaction index", "producer", pid, "first", first, "marker", marker, "err", err)
		}
	}
	if marker >= p.hw.Load() {
		p.mu.unstable = append(p.mu.unstable, unstableTxn{first: first, last: marker})
	}
	p.refreshUnstableLocked()
}

// lsoAfterLocked is the last stable offset once pid's transaction ending
// at marker is complete (Kafka's ProducerStateManager.lastStableOffset):
// the first offset of another producer's open transaction, else the
// offset after the marker. p.mu must be held.
func (p *partition) lsoAfterLocked(pid, marker int64) int64 {
	lso := marker + 1
	for id, st := range p.mu.producers {
		if id != pid && st.txnFirst >= 0 && st.txnFirst < lso {
			lso = st.txnFirst
		}
	}
	return lso
}

// refreshUnstableLocked recomputes the first unstable offset from the open
// and the not yet replicated transactions. p.mu must be held.
func (p *partition) refreshUnstableLocked() {
	first := int64(math.MaxInt64)
	for _, st := range p.mu.producers {
		if st.txnFirst >= 0 && st.txnFirst < first {
			first = st.txnFirst
		}
	}
	for _, u := range p.mu.unstable {
		first = min(first, u.first)
	}
	p.firstUnstable.Store(first)
}

// hwMovedLocked drops the completed transactions the high watermark now
// passes. Called after every store of p.hw. p.mu must be held.
func (p *partition) hwMovedLocked() {
	hw, n := p.hw.Load(), len(p.mu.unstable)
	if n == 0 {
		return
	}
	kept := p.mu.unstable[:0]
	for _, u := range p.mu.unstable {
		if u.last >= hw {
			kept = append(kept, u)
		}
	}
	p.mu.unstable = kept
	if len(kept) != n {
		p.refreshUnstableLocked()
	}
}

// lastStableOffset is where read_committed reads stop: min(first offset
// of an unstable transaction, high watermark), and never below the log
// start (DeleteRecords may delete an open transaction's first batches;
// Kafka's maybeIncrementFirstUnstableOffset). Read without p.mu.
func (p *partition) lastStableOffset() int64 {
	first := max(p.firstUnstable.Load(), p.log.StartOffset())
	return min(first, p.hw.Load())
}

// appendMarker has the leader write producer (pid, epoch)'s COMMIT or
// ABORT marker for a coordinator in coordinatorEpoch (WriteTxnMarkers):
// INVALID_PRODUCER_EPOCH for an epoch older than the producer's,
// TRANSACTION_COORDINATOR_FENCED for a coordinator epoch older than the
// last marker's (Kafka's checkProducerEpoch, checkCoordinatorEpoch). It
// returns the offset after the marker.
func (p *partition) appendMarker(pid int64, epoch int16, coordinatorEpoch int32, commit bool, now time.Time) (int64, kproto.ErrorCode, string) {
	b := markerBatch(pid, epoch, coordinatorEpoch, commit, now.UnixMilli())
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.role != roleLeader {
		return -1, kproto.CodeNotLeaderOrFollower, ""
	}
	if st := p.mu.producers[pid]; st != nil {
		switch {
		case epoch < st.epoch:
			return -1, kproto.CodeInvalidProducerEpoch, "the marker's producer epoch is older than the producer's"
		case coordinatorEpoch < st.coordinatorEpoch:
			return -1, codeTransactionCoordinatorFenced, "the marker's coordinator epoch is older than the last marker's"
		}
	}
	b.SetPartitionLeaderEpoch(p.leaderEpoch.Load())
	before := p.log.ActiveBase()
	base, err := p.log.Append(b, 1, b.MaxTimestamp())
	if err != nil {
		return -1, kproto.CodeKafkaStorageError, err.Error()
	}
	p.snapshotIfRolledLocked(before)
	p.recordBatchLocked(b, base)
	p.advanceLocked()
	p.wakeLocked()
	return base + 1, kproto.CodeNone, ""
}

// stableSegments are the closed segments the cleaner may clean: those
// wholly below the last stable offset (Kafka's firstUncleanableOffset
// includes the first unstable offset), so an open transaction's batches
// and its marker-to-be are never compacted apart.
func (p *partition) stableSegments() []segment.SegmentInfo {
	segs := p.log.ClosedSegments()
	lso := p.lastStableOffset()
	for i, s := range segs {
		if s.Next > lso {
			return segs[:i]
		}
	}
	return segs
}
