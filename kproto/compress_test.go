package kproto

import (
	"bytes"
	"testing"
)

// TestCompressRoundTrip: records built with AppendRecord and AppendBatch,
// compressed with Compress in every codec, read back through Records as
// they were written, with a valid CRC. The batch is a cleaned one: its
// last offset delta (4) is past its last record's (2), which produce
// validation would refuse and the log keeps.
func TestCompressRoundTrip(t *testing.T) {
	var recs []byte
	keys := [][]byte{[]byte("a"), nil, []byte("ccc")}
	vals := [][]byte{[]byte("1"), []byte("two"), nil}
	for i := range keys {
		recs = AppendRecord(recs, int64(i*10-5), int32(i), keys[i], vals[i], 0, nil)
	}
	for _, codec := range []int{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		comp, err := Compress(nil, codec, recs)
		if err != nil {
			t.Fatal(err)
		}
		b := Batch(AppendBatch(nil, BatchHeader{BaseOffset: 7, Attributes: int16(codec) | AttrDeleteHorizon,
			LastOffsetDelta: 4, FirstTimestamp: 1000, MaxTimestamp: 1020, ProducerID: -1, ProducerEpoch: -1,
			BaseSequence: -1, NumRecords: 3}, comp))
		if !b.VerifyCRC() || b.LastOffset() != 11 || b.Codec() != codec {
			t.Fatalf("codec %d: header %+v", codec, HeaderOf(b))
		}
		if h, ok := b.DeleteHorizon(); !ok || h != 1000 {
			t.Fatalf("codec %d: delete horizon %d %v", codec, h, ok)
		}
		it, err := Records(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if !bytes.Equal(r.Key, keys[i]) || !bytes.Equal(r.Value, vals[i]) || (r.Value == nil) != (vals[i] == nil) ||
				r.TimestampDelta != int64(i*10-5) || r.OffsetDelta != int32(i) {
				t.Fatalf("codec %d record %d: %+v", codec, i, r)
			}
			i++
		}
		if it.Err() != nil || i != 3 {
			t.Fatalf("codec %d: %d records, %v", codec, i, it.Err())
		}
	}
}
