package broker

import (
	"github.com/zkafka/zkafka/kproto"
)

// read_committed reads (Fetch isolation_level 1, KIP-98), as Kafka's
// UnifiedLog.read with FetchTxnCommitted: a consumer's read stops at the
// last stable offset instead of the high watermark, and the answer
// carries the aborted transactions of the range returned, from the
// .txnindex files (segment.Log.AbortedTxns), so that the consumer drops
// their batches up to each one's ABORT marker. The record bytes still go
// by sendfile: nothing of them is read here. Every answer, at either
// level, carries the last stable offset.

const isolationReadCommitted = 1

// consumerBound is where a consumer's fetch at isolation stops: the last
// stable offset for read_committed, the high watermark otherwise.
func (p *partition) consumerBound(isolation int8) int64 {
	if isolation == isolationReadCommitted {
		return p.lastStableOffset()
	}
	return p.highWatermark()
}

// abortedInRange is the aborted transactions a read_committed answer of
// [from, upper) reports (an empty list when none: Kafka sends null only
// for read_uncommitted).
func (p *partition) abortedInRange(from, upper int64) []kproto.FetchAbortedTransaction {
	out := []kproto.FetchAbortedTransaction{}
	if upper <= from {
		return out
	}
	for _, e := range p.log.AbortedTxns(from, upper) {
		out = append(out, kproto.FetchAbortedTransaction{ProducerID: e.ProducerID, FirstOffset: e.FirstOffset})
	}
	return out
}
