package compact

import (
	"cmp"
	"slices"

	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// abortedRanges are the aborted transactions of the log being cleaned,
// from its .txnindex files: per producer, the offsets from a transaction's
// first batch up to its ABORT marker. The cleaner leaves their records out
// of the offset map (an aborted record must not shadow a committed one of
// its key) and removes them, as Kafka's Cleaner does with its
// CleanedTransactionMetadata; the markers stay while a cleaning still
// found data of their transaction (filter.control).
type abortedRanges map[int64][]segment.AbortedTxn

func newAbortedRanges(txns []segment.AbortedTxn) abortedRanges {
	if len(txns) == 0 {
		return nil
	}
	out := abortedRanges{}
	for _, e := range txns {
		out[e.ProducerID] = append(out[e.ProducerID], e)
	}
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b segment.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	}
	return out
}

// contains reports whether data batch b is part of an aborted transaction.
func (a abortedRanges) contains(b kproto.Batch) bool {
	if a == nil || !b.Transactional() || b.Control() {
		return false
	}
	rs := a[b.ProducerID()]
	i, _ := slices.BinarySearchFunc(rs, b.BaseOffset(), func(e segment.AbortedTxn, off int64) int {
		switch {
		case e.LastOffset <= off:
			return -1
		case e.FirstOffset > off:
			return 1
		}
		return 0
	})
	return i < len(rs) && rs[i].FirstOffset <= b.BaseOffset() && b.BaseOffset() < rs[i].LastOffset
}
