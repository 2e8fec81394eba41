package compact

import (
	"sync"
	"time"
)

// Throttler bounds the bytes per second that all cleaner threads read
// and write together (log.cleaner.io.max.bytes.per.second), as Kafka's
// Throttler: every check period it compares the bytes since the period
// began with the rate and sleeps off the excess.
type Throttler struct {
	rate  float64 // bytes per second
	now   func() time.Time
	sleep func(time.Duration)

	mu     sync.Mutex
	start  time.Time // of the current period
	bytes  float64   // bytes since start
	period time.Duration
}

// NewThrottler returns a throttler of rate bytes per second; nil (no
// throttling) if rate is <= 0 or infinite. now and sleep may be nil.
func NewThrottler(rate float64, now func() time.Time, sleep func(time.Duration)) *Throttler {
	if rate <= 0 || rate >= 1e300 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = time.Sleep
	}
	return &Throttler{rate: rate, now: now, sleep: sleep, start: now(), period: 300 * time.Millisecond}
}

// Wait accounts n bytes and sleeps if the rate is exceeded. A nil
// Throttler never waits.
func (t *Throttler) Wait(n int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.bytes += float64(n)
	elapsed := t.now().Sub(t.start)
	if elapsed < t.period {
		t.mu.Unlock()
		return
	}
	want := time.Duration(t.bytes / t.rate * float64(time.Second))
	pause := max(want-elapsed, 0)
	// The next period starts after the pause.
	t.start, t.bytes = t.now().Add(pause), 0
	t.mu.Unlock()
	if pause > 0 {
		t.sleep(pause)
	}
}
