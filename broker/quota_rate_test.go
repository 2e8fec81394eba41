package broker

import "testing"

// TestRateMeter checks the meter against Kafka's Rate over a WindowedSum:
// the first records are averaged over num-1 whole windows, samples roll
// over after their window, old samples are purged, and the throttle time
// is (O-T)/T·W.
func TestRateMeter(t *testing.T) {
	w := quotaWindow{num: 11, sizeMs: 1000}
	type rec struct {
		at int64
		v  float64
	}
	tests := []struct {
		name       string
		recs       []rec
		at         int64
		bound      float64
		wantWindow int64
		wantRate   float64
		wantThrot  int64
	}{
		{name: "nothing recorded", at: 0, bound: 100, wantWindow: 10000, wantRate: 0, wantThrot: 0},
		{name: "first burst over the minimum window", recs: []rec{{0, 5000}}, at: 0, bound: 1000,
			wantWindow: 10000, wantRate: 500, wantThrot: 0},
		{name: "burst over the bound", recs: []rec{{0, 20000}}, at: 0, bound: 1000,
			wantWindow: 10000, wantRate: 2000, wantThrot: 10000},
		{name: "a little over", recs: []rec{{0, 11000}}, at: 500, bound: 1000,
			wantWindow: 10500, wantRate: 11000 / 10.5, wantThrot: 500},
		{name: "several samples", recs: []rec{{0, 1000}, {1000, 1000}, {2500, 1000}}, at: 2500, bound: 100,
			wantWindow: 10500, wantRate: 3000 / 10.5, wantThrot: 19500},
		{name: "a full window spans its samples", recs: []rec{{0, 1000}, {5000, 1000}, {10000, 1000}, {12000, 1000}}, at: 12500, bound: 1000,
			// the sample started at 0 is purged (12.5 s ≥ 11 windows): the
			// rate spans 5 s to 12.5 s, padded to 10 whole windows
			wantWindow: 10500, wantRate: 3000 / 10.5, wantThrot: 0},
		{name: "purged after the whole window", recs: []rec{{0, 100000}}, at: 11000, bound: 10,
			wantWindow: 10000, wantRate: 0, wantThrot: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m rateMeter
			for _, r := range tt.recs {
				m.record(w, r.v, r.at)
			}
			if got := m.windowMs(w, tt.at); got != tt.wantWindow {
				t.Errorf("windowMs = %d, want %d", got, tt.wantWindow)
			}
			if got := m.rate(w, tt.at); got < tt.wantRate-1e-9 || got > tt.wantRate+1e-9 {
				t.Errorf("rate = %v, want %v", got, tt.wantRate)
			}
			if got := m.throttleMs(w, tt.bound, tt.at); got != tt.wantThrot {
				t.Errorf("throttleMs = %d, want %d", got, tt.wantThrot)
			}
		})
	}
}

// TestRateMeterRing: with 2 samples of 1 s the third sample reuses the
// first's slot, so only the last two seconds count.
func TestRateMeterRing(t *testing.T) {
	w := quotaWindow{num: 2, sizeMs: 1000}
	var m rateMeter
	m.record(w, 100, 0)
	m.record(w, 200, 1000)
	m.record(w, 400, 2000)
	if got := m.rate(w, 2000); got != 600 {
		t.Fatalf("rate = %v, want 600 (samples at 1 s and 2 s over 1 s)", got)
	}
}
