package compact

import (
	"testing"
	"time"
)

// TestThrottlerRate: the throttler sleeps so that bytes over time stay at
// the rate, measured on a fake clock that the sleeps advance.
func TestThrottlerRate(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	slept := time.Duration(0)
	sleep := func(d time.Duration) { slept += d; now = now.Add(d) }
	th := NewThrottler(1<<20, clock, sleep) // 1 MiB/s
	for range 1000 {
		th.Wait(10 << 10) // 10 KiB at a time, instantly
		now = now.Add(time.Millisecond)
	}
	// 10000 KiB at 1 MiB/s is about 9.8 s; the bytes of the last,
	// unfinished check period (300 ms of work: up to 3000 KiB) may not
	// have been slept off yet.
	if got := now.Sub(time.Unix(0, 0)); got < 9800*time.Millisecond-3*time.Second || got > 11*time.Second {
		t.Fatalf("10000 KiB took %v at 1 MiB/s (slept %v)", got, slept)
	}
	if NewThrottler(0, nil, nil) != nil || NewThrottler(1e308, nil, nil) != nil {
		t.Fatal("an unlimited rate must give no throttler")
	}
	var none *Throttler
	none.Wait(1 << 30) // a nil throttler never waits
}
