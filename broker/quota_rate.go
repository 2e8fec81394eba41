package broker

import "math"

// The rate a client quota is measured with, as Kafka's Rate over a
// WindowedSum (org.apache.kafka.common.metrics.stats): the values recorded
// fall in samples of quota.window.size.seconds each, at most
// quota.window.num of them (Kafka's defaults: 11 of 1 s, "10 whole windows
// and the current one"); the rate is the sum of the samples over the time
// they span, never less than num-1 whole windows, so that a client's first
// burst is averaged over the full window. Time is passed in (milliseconds),
// so the meter is pure and tested with a table (quota_rate_test.go).

// quotaWindow is the window of the meters: num samples of sizeMs each.
type quotaWindow struct {
	num    int
	sizeMs int64
}

// rateSample is one sample: the sum of the values recorded in it since it
// started at startMs.
type rateSample struct {
	startMs int64
	value   float64
}

// rateMeter is one client's usage of one quota. Not safe for concurrent
// use (quotaManager holds a lock).
type rateMeter struct {
	samples []rateSample // up to w.num; a ring, current is the newest
	current int
}

// record adds v at nowMs, moving to a new sample when the current one has
// lasted its window.
func (m *rateMeter) record(w quotaWindow, v float64, nowMs int64) {
	if len(m.samples) == 0 {
		m.samples = append(m.samples, rateSample{startMs: nowMs})
	}
	s := &m.samples[m.current]
	if nowMs-s.startMs >= w.sizeMs {
		m.current = (m.current + 1) % w.num
		if m.current >= len(m.samples) {
			m.samples = append(m.samples, rateSample{startMs: nowMs})
		} else {
			m.samples[m.current] = rateSample{startMs: nowMs}
		}
		s = &m.samples[m.current]
	}
	s.value += v
}

// purge resets the samples older than the whole window (Kafka's
// purgeObsoleteSamples).
func (m *rateMeter) purge(w quotaWindow, nowMs int64) {
	expire := int64(w.num) * w.sizeMs
	for i := range m.samples {
		if nowMs-m.samples[i].startMs >= expire {
			m.samples[i] = rateSample{startMs: nowMs}
		}
	}
}

// windowMs is the time the rate is taken over at nowMs (Rate.windowSize):
// from the oldest sample's start, at least num-1 whole windows, at least 1.
func (m *rateMeter) windowMs(w quotaWindow, nowMs int64) int64 {
	m.purge(w, nowMs)
	oldest := nowMs
	for _, s := range m.samples {
		oldest = min(oldest, s.startMs)
	}
	total := nowMs - oldest
	if full, least := total/w.sizeMs, int64(w.num-1); full < least {
		total += (least - full) * w.sizeMs
	}
	return max(total, 1)
}

// rate is the recorded values per second at nowMs.
func (m *rateMeter) rate(w quotaWindow, nowMs int64) float64 {
	m.purge(w, nowMs)
	var sum float64
	for _, s := range m.samples {
		sum += s.value
	}
	return sum / (float64(m.windowMs(w, nowMs)) / 1000)
}

// throttleMs is how long a client whose rate is above bound must send
// nothing for its rate to come back to bound (QuotaUtils.throttleTime):
// with O the observed rate, T the bound and W the window, O·W/(W+X) = T
// gives X = (O-T)/T·W. 0 when the rate is within the bound.
func (m *rateMeter) throttleMs(w quotaWindow, bound float64, nowMs int64) int64 {
	o := m.rate(w, nowMs)
	if o <= bound {
		return 0
	}
	if bound <= 0 { // a quota of 0: nothing is within it; wait out the window
		return m.windowMs(w, nowMs)
	}
	return int64(math.Round((o - bound) / bound * float64(m.windowMs(w, nowMs))))
}
