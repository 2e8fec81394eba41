package quorum

import "math/bits"

// latencyHistogram counts millisecond latencies in log-linear buckets, so
// that mntr's and Prometheus's percentiles of readlatency and
// updatelatency are real percentiles of every value since the last reset
// (ZooKeeper's AvgMinMaxPercentileCounter samples them into a reservoir).
// Values below 16 ms have a bucket each; above, each doubling is split in
// four, so a percentile is at most 25% above the true value (and never
// above the maximum seen). Fixed size, no allocation per value.
type latencyHistogram [histBuckets]uint64

const (
	histExact   = 16 // values 0..15 have their own bucket
	histSubBits = 2  // four buckets per doubling above
	histBuckets = histExact + (63-4)<<histSubBits
)

// bucketOf is v's bucket (v < 0 counts as 0).
func bucketOf(v int64) int {
	if v < histExact {
		return int(max(v, 0))
	}
	exp := bits.Len64(uint64(v)) - 1 // v in [2^exp, 2^(exp+1)), exp >= 4
	sub := int(uint64(v)>>(exp-histSubBits)) & (1<<histSubBits - 1)
	return histExact + (exp-4)<<histSubBits + sub
}

// upperBound is the largest value in bucket b.
func upperBound(b int) int64 {
	if b < histExact {
		return int64(b)
	}
	exp := (b-histExact)>>histSubBits + 4
	sub := int64((b - histExact) & (1<<histSubBits - 1))
	width := int64(1) << (exp - histSubBits)
	return int64(1)<<exp + (sub+1)*width - 1
}

func (h *latencyHistogram) add(v int64) { h[bucketOf(v)]++ }

// quantile is the q-quantile (0..1) of the values counted, as the upper
// bound of its bucket capped at maxSeen; 0 when there are none.
func (h *latencyHistogram) quantile(q float64, maxSeen int64) int64 {
	var total uint64
	for _, n := range h {
		total += n
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.5)
	rank = min(max(rank, 1), total)
	var seen uint64
	for b, n := range h {
		if seen += n; seen >= rank {
			return min(upperBound(b), maxSeen)
		}
	}
	return maxSeen
}
