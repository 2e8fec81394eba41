package kafkatool

import (
	"sort"
	"sync"
	"time"
)

// latencies collects durations and reports percentiles, as the perf
// tests print them.
type latencies struct {
	mu sync.Mutex
	ds []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.ds = append(l.ds, d)
	l.mu.Unlock()
}

// summary is what bench prints: counts, rates and percentiles in ms.
type summary struct {
	Op         string  `json:"op"`
	Records    int64   `json:"records"`
	Bytes      int64   `json:"bytes"`
	Errors     int64   `json:"errors"`
	Seconds    float64 `json:"seconds"`
	RecordsSec float64 `json:"records_per_sec"`
	MBSec      float64 `json:"mb_per_sec"`
	P50        float64 `json:"p50_ms"`
	P99        float64 `json:"p99_ms"`
	P999       float64 `json:"p999_ms"`
	Max        float64 `json:"max_ms"`
}

// percentile returns the q-quantile (0..1) of sorted ds, nearest rank.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(q*float64(len(ds))+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (l *latencies) summarize(op string, records, bytes, errs int64, elapsed time.Duration) summary {
	l.mu.Lock()
	defer l.mu.Unlock()
	sort.Slice(l.ds, func(i, j int) bool { return l.ds[i] < l.ds[j] })
	s := summary{Op: op, Records: records, Bytes: bytes, Errors: errs, Seconds: elapsed.Seconds(),
		P50: ms(percentile(l.ds, 0.5)), P99: ms(percentile(l.ds, 0.99)), P999: ms(percentile(l.ds, 0.999)),
		Max: ms(percentile(l.ds, 1))}
	if secs := elapsed.Seconds(); secs > 0 {
		s.RecordsSec, s.MBSec = float64(records)/secs, float64(bytes)/secs/1e6
	}
	return s
}
