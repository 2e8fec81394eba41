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
