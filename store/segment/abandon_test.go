package segment

import (
	"testing"
)

// TestAbandon: an abandoned log is not trimmed or synced, yet what it
// wrote stays with the operating system, and the next Open recovers it
// (with preallocation, from the zeros left after the data).
func TestAbandon(t *testing.T) {
	dir := t.TempDir()
	o := Options{SegmentBytes: 64 << 10, PreallocateBytes: 16 << 10}
	l := mustOpen(t, dir, o)
	for off := int64(0); off < 10; off++ {
		b := AppendBatch(nil, payloadFor(off, 100), 1, off)
		if _, err := l.Append(b, 1, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Abandon(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close after Abandon: %v", err)
	}
	l = mustOpen(t, dir, o)
	defer l.Close()
	if got := l.NextOffset(); got != 10 {
		t.Fatalf("NextOffset after Abandon and Open = %d, want 10", got)
	}
}
