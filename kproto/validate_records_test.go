package kproto

import (
	"errors"
	"fmt"
	"testing"
)

// validateBatchReference is ValidateBatchLimit as it was before
// validateRecords: a full RecordIter walk checking each offset delta and
// the headers. validateRecords must accept and reject exactly the same
// record sections.
func validateBatchReference(b Batch, scratch []byte, maxSize int) ([]byte, error) {
	n := b.NumRecords()
	it, err := RecordsLimit(b, scratch, maxSize)
	if err != nil {
		return it.Scratch(), err
	}
	var seen int32
	for {
		r, ok := it.Next()
		if !ok {
			break
		}
		if r.OffsetDelta != seen {
			return it.Scratch(), fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, seen, r.OffsetDelta)
		}
		if _, err := skipHeaders(&r); err != nil {
			return it.Scratch(), err
		}
		seen++
	}
	if err := it.Err(); err != nil {
		return it.Scratch(), err
	}
	if seen != n || len(it.Rest()) != 0 {
		return it.Scratch(), fmt.Errorf("%w: header says %d records, found %d and %d extra bytes", ErrInvalidRecord, n, seen, len(it.Rest()))
	}
	return it.Scratch(), nil
}

// skipHeaders checks the headers of r without allocating.
func skipHeaders(r *Record) (int32, error) {
	b := Reader{Src: r.RawHeaders}
	for i := int32(0); i < r.NumHeaders; i++ {
		b.Span(int(b.Varint())) // header keys are not nullable: -1 fails
		varBytes(&b)
	}
	if err := b.Complete(); err != nil {
		return 0, fmt.Errorf("%w: headers: %v", ErrInvalidRecord, err)
	}
	return r.NumHeaders, nil
}

// checkValidateRecords compares validateRecords with the reference walk on
// one records section.
func checkValidateRecords(t *testing.T, data []byte, n int32) {
	t.Helper()
	hdr := make([]byte, BatchHeaderSize, BatchHeaderSize+len(data))
	hdr[batchMagicOff] = 2
	b := Batch(append(hdr, data...))
	putU32(b[batchCountOff:], uint32(n))
	_, want := validateBatchReference(b, nil, 1<<20)
	got := validateRecords(data, n)
	if (got == nil) != (want == nil) || got != nil && !errors.Is(got, ErrInvalidRecord) {
		t.Fatalf("validateRecords(%x, %d) = %v; reference %v", data, n, got, want)
	}
}

func putU32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

func TestValidateRecordsMatchesReference(t *testing.T) {
	recs := encodeRecords(40, true)
	checkValidateRecords(t, recs, 40)
	checkValidateRecords(t, recs, 39)
	checkValidateRecords(t, recs, 41)
	checkValidateRecords(t, encodeRecords(200, false), 200)
	// every truncation and every single-byte change of a small section
	small := encodeRecords(3, true)
	for i := range small {
		checkValidateRecords(t, small[:i], 3)
		for _, v := range []byte{0, 1, 2, 0x7f, 0x80, 0xff, 0xfe, 0x81} {
			c := append([]byte(nil), small...)
			c[i] = v
			checkValidateRecords(t, c, 3)
		}
	}
}

// FuzzValidateRecords checks validateRecords against the reference walk.
func FuzzValidateRecords(f *testing.F) {
	f.Add(encodeRecords(3, true), int32(3))
	f.Add(encodeRecords(2, false), int32(2))
	f.Add([]byte{0x0c, 0, 0, 0, 1, 0, 2, 0x01, 0x02, 0x80, 0x80, 0x80, 0x80, 0x00}, int32(1))
	f.Fuzz(func(t *testing.T, data []byte, n int32) {
		if n < 0 || n > 1000 {
			return
		}
		checkValidateRecords(t, data, n)
	})
}
