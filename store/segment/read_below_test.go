package segment

import "testing"

// TestReadBelow: reads bounded by an offset (a Kafka leader's high
// watermark) stop before the first batch that reaches it, in the active
// segment and across a roll, and an offset at or past the bound reads
// nothing.
func TestReadBelow(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{SegmentBytes: 400})
	var m model
	for range 12 {
		appendEntry(t, l, &m, 2, 1, 50) // batches of 2 offsets: 0, 2, 4, ...
	}
	if len(l.ClosedSegments()) == 0 {
		t.Fatal("want several segments")
	}
	for _, tc := range []struct {
		offset, end, wantNext int64
	}{
		{0, 24, -1},  // unbounded in effect: Read's answer
		{0, 6, 6},    // stops before the batch at 6
		{0, 5, 4},    // 5 is inside the batch at 4: that batch is left out
		{3, 5, 4},    // from inside a batch
		{4, 5, 4},    // nothing below the bound from there
		{6, 6, 6},    // at the bound
		{9, 6, 9},    // past it
		{10, 20, -1}, // in a later segment, the bound past it
		{10, 11, 10}, // in a later segment, the bound inside its first batch
	} {
		r, err := l.ReadBelow(tc.offset, 1<<20, tc.end)
		if err != nil {
			t.Fatal(err)
		}
		want := tc.wantNext
		if want < 0 {
			full, _ := l.Read(tc.offset, 1<<20)
			want = full.NextOffset
			full.Release()
		}
		if r.NextOffset != want || (r.Len == 0) != (want <= tc.offset) {
			t.Errorf("ReadBelow(%d, end %d): next %d len %d, want next %d", tc.offset, tc.end, r.NextOffset, r.Len, want)
		}
		r.Release()
	}
}
