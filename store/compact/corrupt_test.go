package compact

import (
	"errors"
	"reflect"
	"testing"

	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// TestCleanCorruptRecords: a closed segment holding a batch whose CRC is
// right but whose records do not decode (a buggy producer, or damage
// before the CRC was computed) makes Clean fail with a
// *segment.CorruptError, which the broker takes as "uncleanable", and
// leaves the log as it was.
func TestCleanCorruptRecords(t *testing.T) {
	for _, codec := range []int{kproto.CodecNone, kproto.CodecZstd} {
		l, err := segment.Open(t.TempDir(), segment.Options{SegmentBytes: 400})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			appendSpec(t, l, batchSpec{recs: []rec{{key(i % 3), []byte("v")}}, ts: epoch.UnixMilli(), pid: -1, codec: codec})
		}
		garbage, _ := kproto.Compress(nil, codec, []byte{0x7f, 0x7f, 0x7f})
		bad := kproto.AppendBatch(nil, kproto.BatchHeader{Attributes: int16(codec), ProducerID: -1, ProducerEpoch: -1,
			BaseSequence: -1, NumRecords: 1}, garbage)
		if _, err := l.Append(bad, 1, 0); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			appendSpec(t, l, batchSpec{recs: []rec{{key(i % 3), []byte("w")}}, ts: epoch.UnixMilli(), pid: -1, codec: codec})
		}
		l.Roll()
		before := readAllRaw(t, l)
		p := PlanLog(l.ClosedSegments(), l.StartOffset(), -1, epoch, 0, 0)
		_, _, err = Clean(l, p, Options{Map: NewOffsetMap(1 << 16), Now: epoch, SegmentBytes: 400})
		var ce *segment.CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("codec %d: Clean = %v, want a CorruptError", codec, err)
		}
		if !reflect.DeepEqual(readAllRaw(t, l), before) {
			t.Fatalf("codec %d: the failed cleaning changed the log", codec)
		}
		l.Close()
	}
}

// readAllRaw returns the log's bytes from its start.
func readAllRaw(t *testing.T, l *segment.Log) []byte {
	var out []byte
	for off := l.StartOffset(); off < l.NextOffset(); {
		r, err := l.Read(off, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, r.Len)
		r.ReadAt(buf, 0)
		r.Release()
		out = append(out, buf...)
		off = r.NextOffset
	}
	return out
}
