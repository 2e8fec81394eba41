package compact

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// rec is one record of a test batch; a nil value is a tombstone.
type rec struct {
	key, value []byte
}

// batchSpec describes a test batch.
type batchSpec struct {
	recs          []rec
	codec         int
	ts            int64
	pid           int64 // -1: not idempotent
	epoch         int16
	seq           int32
	transactional bool
	control       int // 0 none, 1 commit marker, 2 abort marker
}

// buildBatch encodes a batch (base offset 0: Append assigns it).
func buildBatch(t testing.TB, s batchSpec) []byte {
	t.Helper()
	var records []byte
	n := int32(len(s.recs))
	if s.control != 0 {
		key := []byte{0, 0, 0, 0} // version 0, abort
		if s.control == 1 {
			key[3] = 1 // commit
		}
		records = kproto.AppendRecord(nil, 0, 0, key, []byte{0, 0, 0, 0, 0, 0}, 0, nil)
		n = 1
	} else {
		for i, r := range s.recs {
			records = kproto.AppendRecord(records, int64(i), int32(i), r.key, r.value, 0, nil)
		}
	}
	comp, err := kproto.Compress(nil, s.codec, records)
	if err != nil {
		t.Fatal(err)
	}
	attr := int16(s.codec)
	if s.transactional || s.control != 0 {
		attr |= kproto.AttrTransactional
	}
	if s.control != 0 {
		attr |= kproto.AttrControl
	}
	h := kproto.BatchHeader{PartitionLeaderEpoch: 0, Attributes: attr, LastOffsetDelta: n - 1,
		FirstTimestamp: s.ts, MaxTimestamp: s.ts + int64(n-1), ProducerID: s.pid, ProducerEpoch: s.epoch,
		BaseSequence: s.seq, NumRecords: n}
	if s.pid < 0 {
		h.ProducerEpoch, h.BaseSequence = -1, -1
	}
	return kproto.AppendBatch(nil, h, comp)
}

// appendSpec appends the batch to l and returns its base offset.
func appendSpec(t testing.TB, l *segment.Log, s batchSpec) int64 {
	t.Helper()
	b := buildBatch(t, s)
	kb := kproto.Batch(b)
	off, err := l.Append(b, kb.LastOffsetDelta()+1, kb.MaxTimestamp())
	if err != nil {
		t.Fatal(err)
	}
	return off
}

// readRec is a record read back from the log.
type readRec struct {
	off        int64
	key, value []byte
	ts         int64
}

// readBack is what a consumer reading the log from its start sees.
type readBack struct {
	recs    []readRec
	batches []kproto.Batch // headers (copies)
}

// readAll reads every batch of l from its start, checking CRCs and that
// offsets strictly increase.
func readAll(t testing.TB, l *segment.Log) readBack {
	t.Helper()
	var out readBack
	last := int64(-1)
	for off := l.StartOffset(); off < l.NextOffset(); {
		buf, err := l.ReadBatches(off, 1<<20, nil)
		if err != nil {
			t.Fatalf("read %d: %v", off, err)
		}
		it := kproto.SplitBatches(buf)
		next := off
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			if !b.VerifyCRC() {
				t.Fatalf("batch %d: bad CRC", b.BaseOffset())
			}
			if b.BaseOffset() <= last {
				t.Fatalf("batch base offset %d after offset %d", b.BaseOffset(), last)
			}
			out.batches = append(out.batches, append(kproto.Batch(nil), b[:kproto.BatchHeaderSize]...))
			if b.Control() {
				last = max(last, b.LastOffset())
				next = b.LastOffset() + 1
				continue
			}
			ri, err := kproto.Records(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			for r, ok := ri.Next(); ok; r, ok = ri.Next() {
				o := b.BaseOffset() + int64(r.OffsetDelta)
				if o <= last || o > b.LastOffset() {
					t.Fatalf("record offset %d after %d / past its batch's last offset %d", o, last, b.LastOffset())
				}
				last = o
				out.recs = append(out.recs, readRec{o, clone(r.Key), clone(r.Value), b.FirstTimestamp() + r.TimestampDelta})
			}
			if ri.Err() != nil {
				t.Fatal(ri.Err())
			}
			last = max(last, b.LastOffset())
			next = b.LastOffset() + 1
		}
		if next == off {
			t.Fatalf("no progress at %d", off)
		}
		off = next
	}
	return out
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func key(i int) []byte { return []byte(fmt.Sprintf("key-%05d", i)) }

var epoch = time.UnixMilli(1_700_000_000_000)
