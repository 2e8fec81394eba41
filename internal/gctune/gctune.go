// Package gctune bounds the garbage collector's headroom in a process whose
// heap is mostly long-lived data: a ZooKeeper server's tree of znodes.
//
// With Go's default GOGC=100 the heap may grow to twice the live heap
// before a collection, and the resident memory of a server holding a
// million znodes (about 210 MB live) settles near twice that. The JVM's
// collector of Apache ZooKeeper has a headroom too, but a Go server can
// keep its own smaller: Run lowers GOGC as the live heap grows, so that
// the headroom stays near Headroom bytes, never below MinPercent of the
// live heap (more collections cost CPU: with a small heap, as in a
// throughput benchmark, GOGC stays 100 and nothing changes).
//
// A GOGC set in the environment is the operator's choice: Run then does
// nothing.
package gctune

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

const (
	// Headroom is the garbage the heap may gather above its live part
	// before a collection, once the live heap exceeds it.
	Headroom = 16 << 20
	// MinPercent is the lowest GOGC Run sets: the headroom of a large
	// heap is MinPercent of it.
	MinPercent = 35
	// MaxPercent is Go's default GOGC, kept while the live heap is small.
	MaxPercent = 100
	// Interval is how often Run reads the live heap.
	Interval = time.Second
)

// Percent is the GOGC for a live heap of live bytes: Headroom/live, within
// [MinPercent, MaxPercent].
func Percent(live uint64) int {
	if live == 0 {
		return MaxPercent
	}
	return int(min(max(Headroom*100/live, MinPercent), MaxPercent))
}

// Run adjusts GOGC every Interval until stop is closed. It returns at once
// if the environment sets GOGC.
func Run(stop <-chan struct{}) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	current := MaxPercent
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			debug.SetGCPercent(MaxPercent)
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return // not served by this runtime
		}
		if p := Percent(sample[0].Value.Uint64()); p != current {
			debug.SetGCPercent(p)
			current = p
		}
	}
}
