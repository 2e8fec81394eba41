package compact

import (
	"encoding/binary"
	"math"

	"github.com/zkafka/zkafka/kproto"
)

// ProducerLast is what the cleaner must know of an active idempotent or
// transactional producer to keep its sequence state in the log: the last
// offset of its last data batch (-1 if it wrote only markers) and its
// epoch. Kafka's ProducerStateManager.activeProducers gives the same.
type ProducerLast struct {
	LastDataOffset int64
	Epoch          int16
}

// filter decides, batch by batch, what a cleaning keeps: Kafka's
// Cleaner.cleanInto with MemoryRecords.filterTo, for magic 2 batches;
// the records of aborted transactions (aborted, from the .txnindex) go.
type filter struct {
	m         *OffsetMap
	end       int64 // offsets >= end were not in the map: kept
	now       int64 // ms
	retention int64 // delete.retention.ms
	producers map[int64]ProducerLast
	// ongoing holds the producers with transactional data read since
	// their last marker: a marker is removable only once its
	// transaction has no data left (Kafka's ongoingCommittedTxns).
	ongoing map[int64]bool
	aborted abortedRanges

	kept    []keptRecord
	records []byte // scratch: the kept records, uncompressed
	comp    []byte // scratch: compressed records
	out     []byte // scratch: the rebuilt batch
	scratch []byte // scratch: decompression
	stats   *Stats
}

// keptRecord is a record a rebuilt batch keeps, with its timestamp.
type keptRecord struct {
	ts int64
	r  kproto.Record
}

// batch returns what to write for b (b itself, or a rebuilt batch in a
// buffer reused by the next call), or nil to drop it.
func (f *filter) batch(b kproto.Batch) ([]byte, error) {
	if b.Control() {
		return f.control(b)
	}
	if b.Transactional() {
		f.ongoing[b.ProducerID()] = true
	}
	retainEmpty := f.lastOfProducer(b)
	horizon, hasHorizon := b.DeleteHorizon()
	it, err := kproto.Records(b, f.scratch[:0])
	f.scratch = it.Scratch()
	if err != nil {
		return nil, err
	}
	var total int32
	tombstones := false
	maxTs := int64(math.MinInt64)
	// The kept records alias f.scratch (or b) until the next batch.
	f.kept = f.kept[:0]
	discard := f.aborted.contains(b)
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		total++
		off := b.BaseOffset() + int64(r.OffsetDelta)
		if discard || !f.keep(off, r.Key, r.Value, hasHorizon, horizon) {
			continue
		}
		ts := b.FirstTimestamp() + r.TimestampDelta
		f.kept = append(f.kept, keptRecord{ts, r})
		maxTs = max(maxTs, ts)
		tombstones = tombstones || r.Value == nil
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	kept := int32(len(f.kept))
	f.stats.RecordsRead += int64(total)
	f.stats.RecordsKept += int64(kept)
	setHorizon := tombstones && !hasHorizon
	switch {
	case kept == 0 && retainEmpty && total == 0:
		return b, nil
	case kept == 0 && retainEmpty:
		return f.emptyHeader(b), nil
	case kept == 0:
		return nil, nil
	case kept == total && !setHorizon:
		return b, nil
	}
	if setHorizon {
		hasHorizon, horizon = true, f.now+f.retention
	}
	base := f.kept[0].ts
	if hasHorizon {
		base = horizon
	}
	f.records = f.records[:0]
	for _, k := range f.kept {
		r := &k.r
		f.records = kproto.AppendRecord(f.records, k.ts-base, r.OffsetDelta, r.Key, r.Value, r.NumHeaders, r.RawHeaders)
	}
	h := kproto.HeaderOf(b)
	h.NumRecords = kept
	h.FirstTimestamp = base
	if !b.LogAppendTime() {
		h.MaxTimestamp = maxTs
	}
	if hasHorizon {
		h.Attributes |= kproto.AttrDeleteHorizon
	}
	return f.rebuild(h, b.Codec())
}

// keep is Kafka's Cleaner.shouldRetainRecord: a record is kept if it is
// past the map, or is the latest of its key and has a value or is a
// tombstone whose batch's delete horizon has not passed. Keyless records
// are dropped (a compacted topic refuses them; Kafka counts them invalid).
func (f *filter) keep(off int64, key, value []byte, hasHorizon bool, horizon int64) bool {
	if off >= f.end {
		return true
	}
	if key == nil {
		return false
	}
	if off < f.m.Get(key) {
		return false
	}
	return value != nil || !hasHorizon || f.now < horizon
}

// lastOfProducer reports whether b holds the last entry of an active
// producer, which is kept (emptied if need be) so the producer's sequence
// survives (Kafka's isBatchLastRecordOfProducer).
func (f *filter) lastOfProducer(b kproto.Batch) bool {
	if b.ProducerID() < 0 {
		return false
	}
	p, ok := f.producers[b.ProducerID()]
	if !ok {
		return false
	}
	if p.LastDataOffset >= 0 {
		return b.LastOffset() == p.LastDataOffset
	}
	return b.Control() && b.ProducerEpoch() == p.Epoch
}

// control handles a transaction marker batch: it is removable once no data
// of its transaction is left (then it gets a delete horizon, and is
// dropped after it), unless it is its producer's last entry.
func (f *filter) control(b kproto.Batch) ([]byte, error) {
	canDiscard := true // an empty control batch was cleaned already
	if b.NumRecords() > 0 {
		it, err := kproto.Records(b, f.scratch[:0])
		f.scratch = it.Scratch()
		if err != nil {
			return nil, err
		}
		r, ok := it.Next()
		if !ok {
			return nil, it.Err()
		}
		// Key: version int16 | type int16 (0 abort, 1 commit). Either
		// marker stays while this cleaning found data of its transaction
		// (an aborted one's data is removed now, so its marker goes at a
		// later cleaning, as in Kafka).
		if len(r.Key) >= 4 && binary.BigEndian.Uint16(r.Key[2:]) <= 1 {
			canDiscard = !f.ongoing[b.ProducerID()]
			delete(f.ongoing, b.ProducerID())
		} else {
			canDiscard = false
		}
	}
	horizon, hasHorizon := b.DeleteHorizon()
	discard := canDiscard && hasHorizon && horizon <= f.now
	retainEmpty := f.lastOfProducer(b)
	switch {
	case discard && retainEmpty:
		if b.NumRecords() == 0 {
			return b, nil
		}
		return f.emptyHeader(b), nil
	case discard:
		return nil, nil
	case canDiscard && !hasHorizon && b.NumRecords() > 0:
		// Rebuild with a delete horizon; records (one marker) unchanged.
		h := kproto.HeaderOf(b)
		h.Attributes |= kproto.AttrDeleteHorizon
		horizon := f.now + f.retention
		it, _ := kproto.Records(b, f.scratch[:0])
		f.records = f.records[:0]
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			ts := b.FirstTimestamp() + r.TimestampDelta
			f.records = kproto.AppendRecord(f.records, ts-horizon, r.OffsetDelta, r.Key, r.Value, r.NumHeaders, r.RawHeaders)
		}
		h.FirstTimestamp = horizon
		return f.rebuild(h, b.Codec())
	}
	return b, nil
}

// emptyHeader is Kafka's DefaultRecordBatch.writeEmptyHeader: the batch's
// offsets, producer fields and max timestamp with no records.
func (f *filter) emptyHeader(b kproto.Batch) []byte {
	h := kproto.HeaderOf(b)
	h.Attributes &= kproto.AttrLogAppendTime | kproto.AttrTransactional | kproto.AttrControl
	h.NumRecords = 0
	h.FirstTimestamp = h.MaxTimestamp
	f.out = kproto.AppendBatch(f.out[:0], h, nil)
	return f.out
}

// rebuild compresses f.records with codec into a batch with header h.
func (f *filter) rebuild(h kproto.BatchHeader, codec int) ([]byte, error) {
	recs := f.records
	if codec != kproto.CodecNone {
		var err error
		if f.comp, err = kproto.Compress(f.comp[:0], codec, f.records); err != nil {
			return nil, err
		}
		recs = f.comp
	}
	f.out = kproto.AppendBatch(f.out[:0], h, recs)
	return f.out, nil
}
