package kproto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var testCodecs = []int{CodecNone, CodecGzip, CodecSnappy, snappyXerial, CodecLZ4, CodecZstd}

func TestBatchAccessorsAndRecords(t *testing.T) {
	for _, codec := range testCodecs {
		t.Run(fmt.Sprint("codec", codec), func(t *testing.T) {
			const n = 40
			raw := makeBatch(t, codec, n)
			set := append(append([]byte(nil), raw...), makeBatch(t, codec, 2)...)
			it := SplitBatches(set)
			var batches []Batch
			for b, ok := it.Next(); ok; b, ok = it.Next() {
				batches = append(batches, b)
			}
			if it.Err() != nil || len(batches) != 2 || len(batches[0]) != len(raw) {
				t.Fatalf("split: %v, %d batches", it.Err(), len(batches))
			}
			b := batches[0]
			var k kmsg.RecordBatch
			if err := k.ReadFrom(raw); err != nil {
				t.Fatal(err)
			}
			if b.BaseOffset() != k.FirstOffset || b.BatchLength() != k.Length || b.PartitionLeaderEpoch() != k.PartitionLeaderEpoch ||
				b.Magic() != 2 || int32(b.CRC()) != k.CRC || b.Attributes() != k.Attributes || b.LastOffsetDelta() != n-1 ||
				b.FirstTimestamp() != k.FirstTimestamp || b.MaxTimestamp() != k.MaxTimestamp || b.ProducerID() != -1 ||
				b.ProducerEpoch() != -1 || b.BaseSequence() != -1 || b.NumRecords() != n || b.LogAppendTime() ||
				b.Transactional() || b.Control() {
				t.Fatalf("accessors disagree with kmsg: %+v", k)
			}
			wantCodec := codec
			if codec == snappyXerial {
				wantCodec = CodecSnappy
			}
			if b.Codec() != wantCodec || !b.VerifyCRC() {
				t.Fatalf("codec %d crc %v", b.Codec(), b.VerifyCRC())
			}
			if _, err := ValidateBatch(b, nil); err != nil {
				t.Fatalf("validate: %v", err)
			}

			// Records decode to what kmsg encoded.
			want := encodeRecords(n, true)
			ri, err := Records(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			count := 0
			for r, ok := ri.Next(); ok; r, ok = ri.Next() {
				var kr kmsg.Record
				l, used := binary.Varint(want)
				if err := kr.ReadFrom(want[:used+int(l)]); err != nil {
					t.Fatal(err)
				}
				want = want[used+int(l):]
				hs, err := r.Headers(nil)
				if err != nil || r.OffsetDelta != kr.OffsetDelta || r.TimestampDelta != kr.TimestampDelta64 ||
					string(r.Key) != string(kr.Key) || (r.Key == nil) != (kr.Key == nil) || string(r.Value) != string(kr.Value) ||
					len(hs) != 2 || string(hs[0].Key) != "h1" || string(hs[0].Value) != "v1" || hs[1].Value != nil {
					t.Fatalf("record %d: %+v vs %+v (%v)", count, r, kr, err)
				}
				if codec == CodecNone && !aliases(r.Value, set) {
					t.Fatal("uncompressed record value was copied")
				}
				count++
			}
			if ri.Err() != nil || count != n || len(ri.Rest()) != 0 {
				t.Fatalf("iterated %d records, err %v", count, ri.Err())
			}

			// Broker rewrites keep the CRC valid.
			b.SetBaseOffset(1234)
			b.SetPartitionLeaderEpoch(7)
			if !b.VerifyCRC() || b.BaseOffset() != 1234 || b.PartitionLeaderEpoch() != 7 || b.LastOffset() != 1234+n-1 {
				t.Fatal("offset/epoch rewrite broke the batch")
			}
			b.SetMaxTimestampAndType(1_800_000_000_000, true)
			if !b.VerifyCRC() || !b.LogAppendTime() || b.MaxTimestamp() != 1_800_000_000_000 || b.Codec() != wantCodec {
				t.Fatal("LogAppendTime rewrite broke the batch")
			}
			if _, err := ValidateBatch(b, nil); err != nil {
				t.Fatalf("validate after rewrite: %v", err)
			}
			var k2 kmsg.RecordBatch
			if err := k2.ReadFrom(b); err != nil || k2.Attributes&AttrLogAppendTime == 0 || k2.MaxTimestamp != 1_800_000_000_000 {
				t.Fatalf("kmsg after rewrite: %v %+v", err, k2)
			}

			// Corruption is caught by the CRC.
			b[len(b)-1] ^= 0xff
			if _, err := ValidateBatch(b, nil); !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("corrupt byte: %v", err)
			}
		})
	}
}

func TestValidateBatchRejects(t *testing.T) {
	mutate := func(codec int, f func(b Batch)) Batch {
		b := Batch(makeBatch(t, codec, 5))
		f(b)
		b.SetCRC()
		return b
	}
	for _, codec := range []int{CodecNone, CodecZstd} {
		for name, b := range map[string]Batch{
			"count high": mutate(codec, func(b Batch) {
				binary.BigEndian.PutUint32(b[batchCountOff:], 6)
				binary.BigEndian.PutUint32(b[batchLODOff:], 5)
			}),
			"count low": mutate(codec, func(b Batch) {
				binary.BigEndian.PutUint32(b[batchCountOff:], 4)
				binary.BigEndian.PutUint32(b[batchLODOff:], 3)
			}),
			"zero count":   mutate(codec, func(b Batch) { binary.BigEndian.PutUint32(b[batchCountOff:], 0) }),
			"lod mismatch": mutate(codec, func(b Batch) { binary.BigEndian.PutUint32(b[batchLODOff:], 9) }),
			"bad codec":    mutate(codec, func(b Batch) { b[batchAttrOff+1] |= 7 }),
		} {
			if _, err := ValidateBatch(b, nil); err == nil {
				t.Errorf("codec %d %s: accepted", codec, name)
			}
		}
	}
	// Offset deltas must be 0, 1, 2, ...: rebuild records with a gap.
	var recs []byte
	for i, d := range []int32{0, 2} {
		r := kmsg.Record{OffsetDelta: d, Value: []byte{byte(i)}}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: 1, NumRecords: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, Records: recs}
	raw := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[batchLengthOff:], uint32(len(raw)-12))
	Batch(raw).SetCRC()
	if _, err := ValidateBatch(raw, nil); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("offset gap: %v", err)
	}
}

func TestSplitBatchesLegacyAndTruncated(t *testing.T) {
	// A magic 1 message: offset, size, crc, magic, attributes, timestamp,
	// key (null), value (null).
	legacy := binary.BigEndian.AppendUint64(nil, 0)
	legacy = binary.BigEndian.AppendUint32(legacy, 4+1+1+8+4+4)
	legacy = append(legacy, 0, 0, 0, 0, 1, 0)
	legacy = binary.BigEndian.AppendUint64(legacy, 1)
	legacy = binary.BigEndian.AppendUint32(legacy, 0xffffffff)
	legacy = binary.BigEndian.AppendUint32(legacy, 0xffffffff)
	it := SplitBatches(legacy)
	b, ok := it.Next()
	if !ok || b.Magic() != 1 || len(b) != len(legacy) {
		t.Fatalf("legacy: %v %v", ok, it.Err())
	}
	if _, err := ValidateBatch(b, nil); err == nil {
		t.Fatal("legacy batch validated")
	}

	good := makeBatch(t, CodecNone, 2)
	for name, set := range map[string][]byte{
		"truncated":     good[:len(good)-1],
		"short header":  append(append([]byte(nil), good...), 1, 2, 3),
		"tiny length":   append(binary.BigEndian.AppendUint64(nil, 0), 0, 0, 0, 5, 0, 0, 0, 0, 2),
		"negative len":  append(binary.BigEndian.AppendUint64(nil, 0), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 2),
		"over the rest": append(binary.BigEndian.AppendUint64(nil, 0), 0x7f, 0, 0, 0, 0, 0, 0, 0, 2),
	} {
		it := SplitBatches(set)
		for _, ok := it.Next(); ok; _, ok = it.Next() {
		}
		if !errors.Is(it.Err(), ErrCorruptBatch) {
			t.Errorf("%s: %v", name, it.Err())
		}
	}
}

func TestDecompressLimits(t *testing.T) {
	big := make([]byte, 1<<20)
	for _, codec := range testCodecs[1:] {
		c := codec
		if c == snappyXerial {
			c = CodecSnappy
		}
		src := compress(t, codec, big)
		if _, err := Decompress(nil, c, src, 1<<19); !errors.Is(err, ErrCorruptBatch) {
			t.Errorf("codec %d: limit not enforced: %v", codec, err)
		}
		out, err := Decompress(nil, c, src, 1<<20)
		if err != nil || len(out) != len(big) {
			t.Errorf("codec %d: %v, %d bytes", codec, err, len(out))
		}
		if _, err := Decompress(nil, c, src[:len(src)/2], 1<<20); err == nil {
			t.Errorf("codec %d: truncated input accepted", codec)
		}
	}
}
