package segment

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

func TestAppendBatch(t *testing.T) {
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xe3069283 {
		t.Fatalf("CRC-32C check value = %#x, want 0xe3069283", got)
	}
	for _, tc := range []struct {
		payload []byte
		count   int32
		ts      int64
	}{{nil, 1, -1}, {[]byte("hello"), 3, 1700000000000}, {make([]byte, 70000), 1000, 0}} {
		prefix := []byte("prefix")
		b := AppendBatch(bytes.Clone(prefix), tc.payload, tc.count, tc.ts)
		if !bytes.HasPrefix(b, prefix) {
			t.Fatal("AppendBatch overwrote dst")
		}
		b = b[len(prefix):]
		be := binary.BigEndian
		switch {
		case len(b) != HeaderSize+len(tc.payload), batchSize(b) != int64(len(b)):
			t.Fatalf("size %d, batchLength+12 %d", len(b), batchSize(b))
		case b[offMagic] != 2 || !checkCRC(b) || checkHeader(b) != "":
			t.Fatal("bad magic or CRC")
		case batchLastOffsetDelta(b) != tc.count-1 || int32(be.Uint32(b[offRecordCount:])) != tc.count:
			t.Fatal("bad lastOffsetDelta or recordCount")
		case batchMaxTimestamp(b) != tc.ts || int64(be.Uint64(b[offFirstTimestamp:])) != tc.ts:
			t.Fatal("bad timestamps")
		case int64(be.Uint64(b[offProducerID:])) != -1 || be.Uint16(b[offAttributes:]) != 0:
			t.Fatal("bad producerId or attributes")
		case !bytes.Equal(Payload(b), tc.payload) && len(tc.payload) > 0:
			t.Fatal("Payload does not give the payload back")
		}
		if err := validateAppend(b, tc.count, tc.ts); err != nil {
			t.Fatal(err)
		}
	}
	if Payload(make([]byte, 10)) != nil {
		t.Fatal("Payload of a short slice")
	}
}

// TestAppendAssignsOffsetInPlace: Append writes the base offset into the
// caller's batch and the CRC stays valid (it does not cover the offset).
func TestAppendAssignsOffsetInPlace(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{})
	defer l.Close()
	for want := int64(0); want < 30; want += 3 {
		b := AppendBatch(nil, []byte("abc"), 3, 9)
		off, err := l.Append(b, 3, 9)
		if err != nil || off != want || BatchBaseOffset(b) != want || !checkCRC(b) {
			t.Fatalf("Append = %d, %v; batch base %d", off, err, BatchBaseOffset(b))
		}
		got, err := l.ReadBatches(off, 1, nil)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("read back %x, %v; want %x", got, err, b)
		}
	}
}
