package broker

import (
	"math"

	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/compact"
)

// activeProducers is what the cleaner keeps of the idempotent producers:
// the last offset of each one's last batch (which cleaning keeps, emptied
// if need be, so the sequence state rebuilt from the log on restart
// survives), as Kafka's ProducerStateManager.activeProducers.
func (p *partition) activeProducers() map[int64]compact.ProducerLast {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[int64]compact.ProducerLast, len(p.mu.producers))
	for pid, st := range p.mu.producers {
		last := st.last()
		if last == nil {
			continue
		}
		delta := int64(last.lastSeq) - int64(last.firstSeq)
		if delta < 0 { // the sequence wrapped inside the batch
			delta += math.MaxInt32 + 1
		}
		out[pid] = compact.ProducerLast{LastDataOffset: last.firstOffset + delta, Epoch: st.epoch}
	}
	return out
}

// keylessRecord reports whether a compacted topic must refuse b: it has a
// record without a key (Kafka's LogValidator: "Compacted topic cannot
// accept message without key"). Compressed batches are decompressed into
// scratch, returned for reuse; validation has already checked the records.
func keylessRecord(b kproto.Batch, scratch []byte) (bool, []byte) {
	it, err := kproto.Records(b, scratch[:0])
	scratch = it.Scratch()
	if err != nil {
		return false, scratch
	}
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		if r.Key == nil {
			return true, scratch
		}
	}
	return false, scratch
}
