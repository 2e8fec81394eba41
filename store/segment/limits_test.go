package segment

import "testing"

// TestSetLimits: an open log rolls by the segment size and deletes by the
// retention given later (an altered topic config), not by Open's.
func TestSetLimits(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{SegmentBytes: 1 << 20})
	defer l.Close()
	for i := 0; i < 4; i++ {
		appendEntry(t, l, nil, 1, 1, 200)
	}
	if n := len(l.list()); n != 1 {
		t.Fatalf("%d segments under 1 MiB segments", n)
	}
	l.SetLimits(Options{SegmentBytes: 300, RetentionBytes: 300})
	for i := 0; i < 4; i++ {
		appendEntry(t, l, nil, 1, 1, 200)
	}
	if n := len(l.list()); n < 4 {
		t.Fatalf("%d segments after segment.bytes=300, want one per batch", n)
	}
	if n, err := l.EnforceRetention(); err != nil || n == 0 {
		t.Fatalf("EnforceRetention after retention.bytes=300: %d %v", n, err)
	}
}
