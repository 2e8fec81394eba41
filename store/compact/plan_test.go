package compact

import (
	"math"
	"testing"
	"time"

	"github.com/zkafka/zkafka/store/segment"
)

// TestPlanLog: the dirty range starts at the checkpoint (reset to the log
// start when out of the log), ends at the active segment or the first
// segment younger than min.compaction.lag.ms, and max.compaction.lag.ms
// makes an old dirty segment due whatever the ratio.
func TestPlanLog(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	ms := func(d int64) int64 { return now.UnixMilli() - d }
	segs := []segment.SegmentInfo{
		{Base: 0, Next: 100, Size: 1000, MaxTimestamp: ms(50_000)},
		{Base: 100, Next: 200, Size: 1000, MaxTimestamp: ms(40_000)},
		{Base: 200, Next: 300, Size: 1000, MaxTimestamp: ms(1_000)},
		{Base: 300, Next: 400, Size: 500, MaxTimestamp: math.MinInt64}, // emptied by cleaning
	}
	for _, tc := range []struct {
		name                   string
		start, checkpoint      int64
		minLag, maxLag         time.Duration
		dirty, uncleanable     int64
		cleanBytes, dirtyBytes int64
		must                   bool
	}{
		{"no checkpoint", 0, -1, 0, 0, 0, 400, 0, 3500, false},
		{"checkpoint", 0, 100, 0, 0, 100, 400, 1000, 2500, false},
		{"checkpoint past the log", 0, 900, 0, 0, 0, 400, 0, 3500, false},
		{"checkpoint below the start", 100, 50, 0, 0, 100, 400, 1000, 2500, false},
		{"min lag", 0, 100, 10 * time.Second, 0, 100, 200, 1000, 1000, false},
		{"max lag", 0, 100, 0, 30 * time.Second, 100, 400, 1000, 2500, true},
		{"max lag not reached", 0, 100, 0, time.Minute, 100, 400, 1000, 2500, false},
	} {
		p := PlanLog(segs, tc.start, tc.checkpoint, now, tc.minLag, tc.maxLag)
		if p.FirstDirty != tc.dirty || p.FirstUncleanable != tc.uncleanable || p.MustClean != tc.must {
			t.Errorf("%s: plan %+v, want dirty [%d, %d) must %v", tc.name, p, tc.dirty, tc.uncleanable, tc.must)
		}
		if tc.start == 0 && (p.CleanBytes != tc.cleanBytes || p.DirtyBytes != tc.dirtyBytes) {
			t.Errorf("%s: clean %d dirty %d bytes, want %d and %d", tc.name, p.CleanBytes, p.DirtyBytes, tc.cleanBytes, tc.dirtyBytes)
		}
	}
	if p := (Plan{CleanBytes: 1000, DirtyBytes: 1000}); !p.Cleanable(0.5) || p.Cleanable(0.6) {
		t.Errorf("ratio 0.5: Cleanable(0.5) %v, Cleanable(0.6) %v", p.Cleanable(0.5), p.Cleanable(0.6))
	}
}

// TestCleanMovesPastTrailingGap: when the dirty part starts in an offset
// gap at the end of the last closed segment (its last batches were
// rewritten away), the cleaning moves the checkpoint past the segment, so
// the next plan has nothing dirty and the cleaner does not clean the same
// log again and again.
func TestCleanMovesPastTrailingGap(t *testing.T) {
	l, err := segment.Open(t.TempDir(), segment.Options{SegmentBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 20 {
		appendSpec(t, l, batchSpec{recs: []rec{{key(i), []byte("v")}}, ts: epoch.UnixMilli(), pid: -1})
	}
	l.Roll() // one closed segment [0, 20)
	w, err := l.BeginRewrite(0, 20)
	if err != nil {
		t.Fatal(err)
	}
	l.ScanSegment(0, func(b []byte) error {
		if segment.BatchBaseOffset(b) < 17 {
			return w.Append(b)
		}
		return nil
	})
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	p := PlanLog(l.ClosedSegments(), l.StartOffset(), 18, epoch, 0, 0)
	next, _, err := Clean(l, p, Options{Map: NewOffsetMap(1 << 16), Now: epoch, SegmentBytes: 1 << 20})
	if err != nil || next != 20 {
		t.Fatalf("Clean from the gap = %d, %v; want the checkpoint past the segment, 20", next, err)
	}
	if p := PlanLog(l.ClosedSegments(), l.StartOffset(), next, epoch, 0, 0); p.DirtyBytes != 0 {
		t.Fatalf("plan after: %+v still dirty", p)
	}
}
