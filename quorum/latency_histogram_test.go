package quorum

import (
	"math/rand"
	"slices"
	"testing"
)

func TestHistogramBucketsCoverEveryValue(t *testing.T) {
	prev := int64(-1)
	for b := 0; b < histBuckets; b++ {
		hi := upperBound(b)
		if hi <= prev {
			t.Fatalf("bucket %d upper bound %d not above %d", b, hi, prev)
		}
		if got := bucketOf(prev + 1); got != b {
			t.Fatalf("value %d in bucket %d, want %d", prev+1, got, b)
		}
		if got := bucketOf(hi); got != b {
			t.Fatalf("value %d in bucket %d, want %d", hi, got, b)
		}
		prev = hi
		if hi < 0 || hi > 1<<62 {
			break
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []int64
		q      float64
		want   int64
	}{
		{"empty", nil, 0.5, 0},
		{"one value", []int64{7}, 0.99, 7},
		{"exact small values", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.5, 5},
		{"p90 of ten", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9, 9},
		{"capped at the max", []int64{100}, 0.5, 100},
		{"outlier only in the tail", append(slices.Repeat([]int64{2}, 99), 5000), 0.5, 2},
		{"outlier is the p999", append(slices.Repeat([]int64{2}, 99), 5000), 0.999, 5000},
	} {
		var h latencyHistogram
		var maxSeen int64
		for _, v := range tc.values {
			h.add(v)
			maxSeen = max(maxSeen, v)
		}
		if got := h.quantile(tc.q, maxSeen); got != tc.want {
			t.Errorf("%s: quantile(%v) = %d, want %d", tc.name, tc.q, got, tc.want)
		}
	}
}

// TestHistogramErrorBound: a percentile is never below the true one and at
// most 25% above it.
func TestHistogramErrorBound(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var h latencyHistogram
	var vals []int64
	for i := 0; i < 10000; i++ {
		v := int64(r.ExpFloat64() * 200)
		h.add(v)
		vals = append(vals, v)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
		rank := int(q*float64(len(vals))+0.5) - 1
		exact := vals[rank]
		got := h.quantile(q, vals[len(vals)-1])
		if got < exact || float64(got) > float64(exact)*1.25+1 {
			t.Errorf("p%v = %d, exact %d", q*100, got, exact)
		}
	}
}
