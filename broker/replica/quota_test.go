package replica

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestRate: Kafka's SimpleRate over a WindowedSum, worked out by hand from
// SampledStat (record, advance, purgeObsoleteSamples) and
// SimpleRate.windowSize (time since the oldest sample, at least one
// window).
func TestRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	r := NewRate(11, time.Second)
	steps := []struct {
		record float64 // 0: measure only
		at     time.Duration
		want   float64
	}{
		{1000, 0, 1000},                      // one window at least
		{0, 500 * time.Millisecond, 1000},    // still within the first window
		{0, 2 * time.Second, 500},            // 1000 over 2 s
		{1000, 2 * time.Second, 1000},        // a second sample: 2000 over 2 s
		{0, 11 * time.Second, 1000.0 / 9},    // the first sample expired (11 windows old) and restarts empty at 11 s: 1000 over 9 s
		{0, 13 * time.Second, 0},             // the second expired too (restarting at 13 s)
		{500, 13500 * time.Millisecond, 200}, // into the current sample; the oldest starts at 11 s: 500 over 2.5 s
	}
	for i, s := range steps {
		if s.record > 0 {
			r.Record(s.record, at(s.at))
		}
		if got := r.Measure(at(s.at)); math.Abs(got-s.want) > 1e-9 {
			t.Errorf("step %d at %v: rate %v, want %v", i, s.at, got, s.want)
		}
	}

	// Two windows: the third sample reuses the first slot.
	r = NewRate(2, time.Second)
	r.Record(10, at(0))
	r.Record(10, at(time.Second))
	r.Record(10, at(2*time.Second))
	if got := r.Measure(at(2 * time.Second)); got != 20 {
		t.Errorf("wrapped: rate %v, want 20 (two samples over 1 s)", got)
	}
}

// TestQuota: a rate above the bound is exceeded; equal is not (Kafka's
// Quota.acceptable); unlimited never is.
func TestQuota(t *testing.T) {
	t0 := time.Unix(1000, 0)
	q := NewQuota(11, time.Second)
	q.Record(5000, t0)
	if q.Exceeded(t0) {
		t.Error("unlimited quota exceeded")
	}
	q = NewQuota(11, time.Second)
	q.SetBound(1000)
	q.Record(1000, t0)
	if q.Exceeded(t0) {
		t.Error("1000 B/s at a bound of 1000 exceeded")
	}
	q.Record(1, t0)
	if !q.Exceeded(t0) {
		t.Error("1001 B/s at a bound of 1000 not exceeded")
	}
	if q.Exceeded(t0.Add(2 * time.Second)) {
		t.Error("1001 B over 2 s exceeded a bound of 1000")
	}
}

// TestThrottledReplicas: Kafka's ThrottledReplicaListValidator and
// parseThrottledPartitions.
func TestThrottledReplicas(t *testing.T) {
	for v, ok := range map[string]bool{"*": true, "": true, "0:1,1:2": true, " 0:1 , 3:1 ": true,
		"0:1,": true, "x": false, "0:1,*": false, "0-1": false, "0:": false} {
		if err := CheckThrottledReplicas(v); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", v, err, ok)
		}
	}
	for _, tc := range []struct {
		v      string
		broker int32
		want   string
	}{
		{"*", 2, "{true []}"},
		{"0:1,1:2, 3:2", 2, "{false [1 3]}"},
		{"0:1", 2, "{false []}"},
		{"", 1, "{false []}"},
	} {
		if got := fmt.Sprint(ParseThrottledReplicas(tc.v, tc.broker)); got != tc.want {
			t.Errorf("%q on %d: %s, want %s", tc.v, tc.broker, got, tc.want)
		}
	}
	if th := ParseThrottledReplicas("4:7", 7); !th.Has(4) || th.Has(5) || !(Throttled{All: true}).Has(9) {
		t.Error("Has")
	}
}
