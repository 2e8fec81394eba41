package segment

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRecover feeds arbitrary bytes to Open as the active segment (mode
// even) or as a closed segment with arbitrary indexes (mode odd), with
// preallocation on if mode&2 (then zeros after the batches end them). Open must
// not panic; when the bytes are the active segment, the recovered log must
// be a prefix of them made only of valid batches, and appends must work.
func FuzzRecover(f *testing.F) {
	var valid []byte
	for i := range 6 {
		b := AppendBatch(nil, payloadFor(int64(i), i*40), int32(1+i%3), int64(i))
		copy(b, be64(int64(i*2)))
		valid = append(valid, b...)
	}
	f.Add(byte(0), valid, []byte{})
	f.Add(byte(0), valid[:len(valid)-7], []byte{})
	f.Add(byte(0), append(bytes.Clone(valid), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), []byte{})
	flipped := bytes.Clone(valid)
	flipped[100] ^= 4
	f.Add(byte(0), flipped, []byte{})
	f.Add(byte(1), valid, []byte{0, 0, 0, 3, 0, 0, 0, 61})
	f.Add(byte(1), valid, []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	padded := append(bytes.Clone(valid), make([]byte, 4096-len(valid))...)
	f.Add(byte(2), padded, []byte{})
	f.Add(byte(2), append(bytes.Clone(padded), 9), []byte{})
	f.Add(byte(3), padded, []byte{})
	f.Add(byte(3), padded, []byte{0, 0, 0, 3, 0, 0, 0, 61})
	f.Fuzz(func(t *testing.T, mode byte, data, index []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, segmentName(0, ".log")), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if mode%2 == 1 {
			os.WriteFile(filepath.Join(dir, segmentName(0, ".index")), index, 0o644)
			os.WriteFile(filepath.Join(dir, segmentName(0, ".timeindex")), append(index, 1, 2, 3, 4), 0o644)
			os.WriteFile(filepath.Join(dir, segmentName(1000, ".log")), nil, 0o644)
		}
		o := Options{IndexIntervalBytes: 64}
		if mode&2 != 0 {
			o.PreallocateBytes = 256
		}
		l, err := Open(dir, o)
		if err != nil {
			return // a closed segment may be reported corrupt
		}
		defer l.Close()
		if mode%2 == 1 {
			// Reads of a damaged closed segment may fail, never panic.
			for off := int64(0); off < 1000; off += 97 {
				l.ReadBatches(off, 200, nil)
				l.OffsetForTime(off)
			}
			return
		}
		var got []byte
		for off := l.StartOffset(); off < l.NextOffset(); {
			b, err := l.ReadBatches(off, 1<<20, nil)
			if err != nil {
				t.Fatalf("ReadBatches(%d): %v", off, err)
			}
			es, err := parseBatches(b)
			if err != nil || len(es) == 0 {
				t.Fatalf("recovered log has an invalid batch at %d: %v", off, err)
			}
			got = append(got, b...)
			last := es[len(es)-1]
			off = last.base + int64(last.count)
		}
		if !bytes.HasPrefix(data, got) || int64(len(got)) != l.Size() {
			t.Fatalf("recovered %d bytes that are not a prefix of the %d input bytes (size %d)", len(got), len(data), l.Size())
		}
		next := l.NextOffset()
		if off, err := l.Append(AppendBatch(nil, []byte("z"), 1, 0), 1, 0); err != nil || off != next {
			t.Fatalf("Append after recovery = %d, %v; want %d", off, err, next)
		}
	})
}
