package segment

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Compare BenchmarkAppend with BenchmarkRawWrite of the same sizes and
// sync policy, in the same run:
//
//	go test -run '^$' -bench 'Append|RawWrite|ReadFileRange' ./store/segment/
//
// or run go run ./store/segment/internal/segbench for a table with ratios.

var benchSizes = []int{1 << 10, 16 << 10}

func BenchmarkAppend(b *testing.B) {
	for _, size := range benchSizes {
		for _, every := range []int64{0, 100} {
			b.Run(fmt.Sprintf("%dKiB/fsync=%d", size>>10, every), func(b *testing.B) {
				l := mustOpen(b, b.TempDir(), Options{FlushEntries: every})
				defer l.Close()
				batch := AppendBatch(nil, make([]byte, size-HeaderSize), 1, 0)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := l.Append(batch, 1, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRawWrite writes the same bytes sequentially to a plain file:
// the ceiling Append is measured against.
func BenchmarkRawWrite(b *testing.B) {
	for _, size := range benchSizes {
		for _, every := range []int{0, 100} {
			b.Run(fmt.Sprintf("%dKiB/fsync=%d", size>>10, every), func(b *testing.B) {
				f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				batch := AppendBatch(nil, make([]byte, size-HeaderSize), 1, 0)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if _, err := f.Write(batch); err != nil {
						b.Fatal(err)
					}
					if i++; every > 0 && i%every == 0 {
						if err := datasync(f); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// BenchmarkReadFileRange reads 1 MiB ranges and sends them to /dev/null
// through FileRange.WriteTo (sendfile).
func BenchmarkReadFileRange(b *testing.B) {
	l := mustOpen(b, b.TempDir(), Options{})
	defer l.Close()
	batch := AppendBatch(nil, make([]byte, 16<<10-HeaderSize), 1, 0)
	for range 4096 { // 64 MiB
		if _, err := l.Append(batch, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	off := int64(0)
	for b.Loop() {
		r, err := l.Read(off, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.WriteTo(null); err != nil {
			b.Fatal(err)
		}
		r.Release()
		if off = r.NextOffset; off == l.NextOffset() {
			off = 0
		}
	}
}

// BenchmarkAppendSync appends entries of 100 to 1000 bytes and fsyncs
// after each, as the raft log does once per Ready, with and without
// preallocation, reporting the fsync's p50 and p99:
//
//	go test -run '^$' -bench AppendSync -benchtime 20000x -count 3 ./store/segment/
func BenchmarkAppendSync(b *testing.B) {
	for _, pre := range []int64{0, 1 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("preallocate=%dMiB", pre>>20), func(b *testing.B) {
			l := mustOpen(b, b.TempDir(), Options{SegmentBytes: 64 << 20, PreallocateBytes: pre})
			defer l.Close()
			var batches [][]byte
			for i := range 64 {
				batches = append(batches, AppendBatch(nil, make([]byte, 100-HeaderSize+(i*367)%901), 1, 0))
			}
			syncs := make([]time.Duration, 0, 1<<16)
			i := 0
			for b.Loop() {
				if _, err := l.Append(batches[i%len(batches)], 1, 0); err != nil {
					b.Fatal(err)
				}
				i++
				t := time.Now()
				if err := l.Sync(); err != nil {
					b.Fatal(err)
				}
				syncs = append(syncs, time.Since(t))
			}
			slices.Sort(syncs)
			q := func(p float64) float64 { return float64(syncs[int(p*float64(len(syncs)-1))].Microseconds()) }
			b.ReportMetric(q(0.5), "fsync-p50-µs")
			b.ReportMetric(q(0.99), "fsync-p99-µs")
		})
	}
}

// BenchmarkAppendRoll appends 256 KiB batches through segment rolls (64
// MiB segments, each roll fsyncs the old one), with and without
// WritebackBytes: the slowest Append is the one that rolls, and the CPU
// per GB includes the writeback the process starts itself. Run it with
// at least -benchtime 2000x so that several segments roll.
func BenchmarkAppendRoll(b *testing.B) {
	for _, wb := range []int64{0, 8 << 20} {
		b.Run(fmt.Sprintf("writeback=%dMiB", wb>>20), func(b *testing.B) {
			l := mustOpen(b, b.TempDir(), Options{WritebackBytes: wb, SegmentBytes: 64 << 20})
			defer l.Close()
			batch := AppendBatch(nil, make([]byte, 256<<10), 256, 1)
			b.SetBytes(int64(len(batch)))
			var worst time.Duration
			cpu0 := processCPU()
			for b.Loop() {
				start := time.Now()
				if _, err := l.Append(batch, 256, 1); err != nil {
					b.Fatal(err)
				}
				worst = max(worst, time.Since(start))
			}
			gb := float64(b.N) * float64(len(batch)) / 1e9
			b.ReportMetric((processCPU()-cpu0).Seconds()/gb, "cpu-s/GB")
			b.ReportMetric(float64(worst.Microseconds())/1e3, "worst-ms")
		})
	}
}
