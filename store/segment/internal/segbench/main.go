// Command segbench measures the segment log against raw sequential writes
// of the same bytes to a plain file, back to back in one run, on a
// temporary directory under the working directory (so on its file
// system), and prints a table. It runs for about 30 seconds.
//
//	go run ./store/segment/internal/segbench
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/zkafka/zkafka/store/segment"
)

// result is one measured run.
type result struct {
	bytes, entries int64
	elapsed        time.Duration
	allocs         float64 // per entry
}

func (r result) mbps() float64   { return float64(r.bytes) / r.elapsed.Seconds() / 1e6 }
func (r result) perSec() float64 { return float64(r.entries) / r.elapsed.Seconds() }
func better(a, b result) result {
	if b.elapsed > 0 && (a.elapsed == 0 || b.mbps() > a.mbps()) {
		return b
	}
	return a
}

var (
	volume = flag.Int64("bytes", 256<<20, "bytes written per run without fsync")
	capDur = flag.Duration("max", time.Second, "time limit of one run")
	reps   = flag.Int("reps", 3, "runs per case; the best is reported")
)

func main() {
	flag.Parse()
	root, err := os.MkdirTemp(".", "segbench-")
	check(err)
	defer os.RemoveAll(root)

	fmt.Printf("%-26s %10s %12s %8s %13s\n", "case", "MB/s", "entries/s", "ratio", "allocs/append")
	for _, size := range []int{1 << 10, 16 << 10} {
		for _, every := range []int{0, 100} {
			var raw, app result
			for i := range *reps {
				raw = better(raw, rawWrite(filepath.Join(root, fmt.Sprint("raw", i)), size, every))
				settle(root)
				app = better(app, appendRun(filepath.Join(root, fmt.Sprint("log", i)), size, every))
				settle(root)
			}
			name := fmt.Sprintf("%dKiB fsync/%d", size>>10, every)
			if every == 0 {
				name = fmt.Sprintf("%dKiB no fsync", size>>10)
			}
			fmt.Printf("%-26s %10.0f %12.0f %8s %13s\n", "raw write "+name, raw.mbps(), raw.perSec(), "1.00", "-")
			fmt.Printf("%-26s %10.0f %12.0f %8.2f %13.2f\n", "append "+name, app.mbps(), app.perSec(), app.mbps()/raw.mbps(), app.allocs)
		}
	}
	readRuns(filepath.Join(root, "read"))
}

func rawWrite(path string, size, every int) result {
	defer os.Remove(path)
	f, err := os.Create(path)
	check(err)
	defer f.Close()
	batch := segment.AppendBatch(nil, make([]byte, size-segment.HeaderSize), 1, 0)
	return loop(size, every, func(i int64) {
		_, err := f.Write(batch)
		check(err)
		if every > 0 && (i+1)%int64(every) == 0 {
			check(datasync(f))
		}
	})
}

func appendRun(dir string, size, every int) result {
	defer os.RemoveAll(dir)
	l, err := segment.Open(dir, segment.Options{FlushEntries: int64(every)})
	check(err)
	defer l.Close()
	batch := segment.AppendBatch(nil, make([]byte, size-segment.HeaderSize), 1, 0)
	return loop(size, every, func(int64) {
		_, err := l.Append(batch, 1, 0)
		check(err)
	})
}

// loop runs op until volume bytes are written or the time limit passes,
// counting allocations.
func loop(size, every int, op func(i int64)) result {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	limit := *volume / int64(size)
	start := time.Now()
	var n int64
	for n < limit {
		op(n)
		n++
		if n%64 == 0 && time.Since(start) > *capDur {
			break
		}
	}
	el := time.Since(start)
	runtime.ReadMemStats(&ms)
	return result{bytes: n * int64(size), entries: n, elapsed: el, allocs: float64(ms.Mallocs-mallocs) / float64(n)}
}

// readRuns fills a log with 256 MiB of 16 KiB batches and reads it back in
// 1 MiB file ranges: with sendfile to /dev/null, and copied into
// io.Discard.
func readRuns(dir string) {
	defer os.RemoveAll(dir)
	l, err := segment.Open(dir, segment.Options{})
	check(err)
	defer l.Close()
	batch := segment.AppendBatch(nil, make([]byte, 16<<10-segment.HeaderSize), 1, 0)
	for range (256 << 20) / (16 << 10) {
		_, err := l.Append(batch, 1, 0)
		check(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	check(err)
	defer null.Close()
	run := func(name string, send func(r *segment.FileRange) (int64, error)) {
		var best result
		for range *reps {
			var n, ranges int64
			start := time.Now()
			for off := l.StartOffset(); off < l.NextOffset(); {
				r, err := l.Read(off, 1<<20)
				check(err)
				m, err := send(&r)
				check(err)
				r.Release()
				n, ranges, off = n+m, ranges+1, r.NextOffset
			}
			best = better(best, result{bytes: n, entries: ranges, elapsed: time.Since(start)})
		}
		fmt.Printf("%-26s %10.0f %12.0f %8s %13s\n", name, best.mbps(), best.perSec(), "", "(ranges/s)")
	}
	run("read 1MiB ranges sendfile", func(r *segment.FileRange) (int64, error) { return r.WriteTo(null) })
	run("read 1MiB ranges io.Copy", func(r *segment.FileRange) (int64, error) {
		return io.Copy(io.Discard, io.NewSectionReader(r, 0, r.Len))
	})
}

// settle commits the removal of the previous run's files (fsync of the
// directory forces the journal commit) so the next run does not pay for it.
func settle(dir string) {
	d, err := os.Open(dir)
	check(err)
	check(d.Sync())
	check(d.Close())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "segbench:", err)
		os.Exit(1)
	}
}
