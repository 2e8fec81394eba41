package kproto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"unsafe"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Codec variants used by tests; snappyXerial is CodecSnappy with Java's
// Xerial framing.
const snappyXerial = 100

// encodeRecords encodes n records with franz-go's kmsg.Record.
func encodeRecords(n int, headers bool) []byte {
	var out []byte
	for i := range n {
		r := kmsg.Record{
			TimestampDelta64: int64(i * 3),
			OffsetDelta:      int32(i),
			Key:              []byte(fmt.Sprintf("key-%d", i)),
			Value:            bytes.Repeat([]byte{byte('a' + i%26)}, 10+i%50),
		}
		if i%7 == 3 {
			r.Key = nil
		}
		if headers {
			r.Headers = []kmsg.Header{{Key: "h1", Value: []byte("v1")}, {Key: "h2", Value: nil}}
		}
		enc := r.AppendTo(nil) // Length 0 is one varint byte
		r.Length = int32(len(enc) - 1)
		out = r.AppendTo(out)
	}
	return out
}

// compress compresses src as a Kafka client would for codec.
func compress(t testing.TB, codec int, src []byte) []byte {
	t.Helper()
	switch codec {
	case CodecNone:
		return src
	case CodecGzip:
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(src)
		w.Close()
		return b.Bytes()
	case CodecSnappy:
		return snappy.Encode(nil, src)
	case snappyXerial:
		out := append([]byte(nil), xerialHeader...)
		out = binary.BigEndian.AppendUint32(out, 1)
		out = binary.BigEndian.AppendUint32(out, 1)
		for len(src) > 0 { // small chunks to exercise the chunk loop
			n := min(len(src), 100)
			blk := snappy.Encode(nil, src[:n])
			out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
			out = append(out, blk...)
			src = src[n:]
		}
		return out
	case CodecLZ4:
		var b bytes.Buffer
		w := lz4.NewWriter(&b)
		w.Write(src)
		w.Close()
		return b.Bytes()
	case CodecZstd:
		e, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		return e.EncodeAll(src, nil)
	}
	t.Fatalf("unknown codec %d", codec)
	return nil
}

// makeBatch builds a valid magic 2 batch of n records with kmsg.RecordBatch.
func makeBatch(t testing.TB, codec, n int) []byte {
	t.Helper()
	attr := int16(codec)
	if codec == snappyXerial {
		attr = CodecSnappy
	}
	rb := kmsg.RecordBatch{
		FirstOffset:          0,
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           attr,
		LastOffsetDelta:      int32(n - 1),
		FirstTimestamp:       1_700_000_000_000,
		MaxTimestamp:         1_700_000_000_000 + int64(3*(n-1)),
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(n),
		Records:              compress(t, codec, encodeRecords(n, true)),
	}
	raw := rb.AppendTo(nil)
	rb.Length = int32(len(raw) - 12)
	rb.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return rb.AppendTo(raw[:0])
}

func sp(s string) *string { return &s }

func topicID(i int) [16]byte {
	var id [16]byte
	for j := range id {
		id[j] = byte(i*16 + j + 1)
	}
	return id
}

// someTags returns a tag section with one unknown tag, for flexible versions.
func someTags(tag uint32) kmsg.Tags {
	var t kmsg.Tags
	t.Set(tag, []byte{byte(tag), 0xee})
	return t
}

func mustEqualBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: bytes differ\n got %x\nwant %x", what, got, want)
	}
}

// aliases reports whether sub lies inside buf (zero-copy check).
func aliases(sub, buf []byte) bool {
	if len(sub) == 0 || len(buf) == 0 {
		return false
	}
	return &sub[0] == &buf[0] || (uintptrOf(sub) >= uintptrOf(buf) && uintptrOf(sub) < uintptrOf(buf)+uintptr(len(buf)))
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
