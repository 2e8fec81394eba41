package kproto

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceBody is a v9 produce request with one topic and one partition
// whose batch holds n records.
func produceBody(tb testing.TB, n int) []byte {
	k := kmsg.NewPtrProduceRequest()
	k.Version, k.Acks, k.TimeoutMillis = 9, -1, 1000
	k.Topics = []kmsg.ProduceRequestTopic{{Topic: "bench", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: makeBatch(tb, CodecNone, n)}}}}
	return k.AppendTo(nil)
}

// decodeAndValidate is the broker's produce path in kproto: decode, split,
// validate each batch.
func decodeAndValidate(r *ProduceRequest, body []byte, scratch []byte) ([]byte, error) {
	if err := r.Decode(9, body); err != nil {
		return scratch, err
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			it := SplitBatches(p.Records)
			for b, ok := it.Next(); ok; b, ok = it.Next() {
				var err error
				if scratch, err = ValidateBatch(b, scratch); err != nil {
					return scratch, err
				}
			}
			if it.Err() != nil {
				return scratch, it.Err()
			}
		}
	}
	return scratch, nil
}

// TestProduceDecodeAllocs pins the allocation count of the produce path: it
// must not grow with the number of records (one allocation, the topic name).
func TestProduceDecodeAllocs(t *testing.T) {
	var prev float64 = -1
	for _, n := range []int{1, 100, 5000} {
		body := produceBody(t, n)
		var r ProduceRequest
		var scratch []byte
		decodeAndValidate(&r, body, scratch) // warm the reused slices
		allocs := testing.AllocsPerRun(50, func() {
			if _, err := decodeAndValidate(&r, body, scratch); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 1 || (prev >= 0 && allocs != prev) {
			t.Fatalf("%d records: %v allocs (previous %v)", n, allocs, prev)
		}
		prev = allocs
	}
}

func BenchmarkProduceDecode(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			body := produceBody(b, n)
			var r ProduceRequest
			var scratch []byte
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if scratch, err = decodeAndValidate(&r, body, scratch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFetchResponseWriter(b *testing.B) {
	var w FetchResponseWriter
	p := FetchPartitionResponse{HighWatermark: 100, LastStableOffset: 100, PreferredReadReplica: -1}
	b.ReportAllocs()
	for b.Loop() {
		w.Begin(w.Buf[:0], 13, 1, &FetchResponseHead{}, 10)
		for range 10 {
			w.Topic("", topicID(1), 10)
			for range 10 {
				w.Partition(&p, 1<<20)
			}
		}
		if err := w.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordsCompressed(b *testing.B) {
	for _, codec := range testCodecs[1:] {
		b.Run(fmt.Sprint("codec", codec), func(b *testing.B) {
			batch := Batch(makeBatch(b, codec, 1000))
			var scratch []byte
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if scratch, err = ValidateBatch(batch, scratch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValidateBatch1KiB is the raw bench's batch: 256 records of 1 KiB
// values, uncompressed (CRC and record walk).
func BenchmarkValidateBatch1KiB(b *testing.B) {
	var recs []byte
	val := make([]byte, 1024)
	for i := range 256 {
		r := kmsg.Record{OffsetDelta: int32(i), Value: val}
		enc := r.AppendTo(nil)
		r.Length = int32(len(enc) - 1)
		recs = r.AppendTo(recs)
	}
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: 255, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 256, Records: recs}
	raw := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	batch := Batch(raw)
	batch.SetCRC()
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ValidateBatch(batch, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCRC1KiB is the CRC part of BenchmarkValidateBatch1KiB.
func BenchmarkCRC1KiB(b *testing.B) {
	batch := Batch(make([]byte, 61+256*1035))
	b.SetBytes(int64(len(batch)))
	for b.Loop() {
		batch.VerifyCRC()
	}
}
