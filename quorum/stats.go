package quorum

import (
	"sync"
	"sync/atomic"
	"time"
)

// serverStats are the counters the four-letter words report.
type serverStats struct {
	received atomic.Int64
	sent     atomic.Int64
	mu       struct {
		sync.Mutex
		count          int64
		total          time.Duration
		minLat, maxLat time.Duration
	}
}

func newServerStats() *serverStats { return &serverStats{} }

// observe records one request's latency.
func (s *serverStats) observe(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.count == 0 || d < s.mu.minLat {
		s.mu.minLat = d
	}
	if d > s.mu.maxLat {
		s.mu.maxLat = d
	}
	s.mu.count++
	s.mu.total += d
}

// latency returns min, average and max latency in milliseconds.
func (s *serverStats) latency() (minMs int64, avgMs float64, maxMs int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.count == 0 {
		return 0, 0, 0
	}
	return s.mu.minLat.Milliseconds(), float64(s.mu.total.Microseconds()) / 1000 / float64(s.mu.count), s.mu.maxLat.Milliseconds()
}

// reset clears the counters (srst).
func (s *serverStats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.count, s.mu.total, s.mu.minLat, s.mu.maxLat = 0, 0, 0, 0
}
