// Command cleanbench measures the log cleaner (make bench): its
// throughput in MB/s of log cleaned and its memory (the offset map, and
// the heap the cleaning allocates besides), for uncompressed and lz4
// batches; and the append throughput of a second log on the same disk
// while the cleaner runs, as a ratio to the same appends with no cleaning,
// unthrottled and with log.cleaner.io.max.bytes.per.second.
//
//	go run ./store/compact/internal/cleanbench [-mb 128] [-dir .]
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/compact"
	"github.com/zkafka/zkafka/store/segment"
)

func main() {
	mb := flag.Int("mb", 128, "MiB of log to clean")
	dir := flag.String("dir", ".", "directory for the logs (its file system is measured)")
	keys := flag.Int("keys", 10000, "distinct keys (the rest of the records are duplicates)")
	dur := flag.Duration("append", 3*time.Second, "how long each append measurement runs")
	flag.Parse()
	root, err := os.MkdirTemp(*dir, "cleanbench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	fmt.Printf("log cleaner: %d MiB of 1 KiB records over %d keys, 64 MiB segments, 16 MiB offset map\n", *mb, *keys)
	fmt.Printf("%-14s %10s %10s %12s %14s\n", "codec", "MB/s", "kept", "map MiB", "heap alloc MiB")
	for _, codec := range []int{kproto.CodecNone, kproto.CodecLZ4} {
		l := buildLog(root, codec, *mb, *keys)
		secs, kept, mapMiB, heap := cleanOnce(l, nil)
		fmt.Printf("%-14s %10.1f %9.1f%% %12.1f %14.1f\n", codecName(codec), float64(*mb)/secs, kept*100, mapMiB, heap)
		l.Close()
	}
	fmt.Println()
	fmt.Println("append throughput of another log (1 KiB batches) while the cleaner runs, as a ratio to no cleaning:")
	l := buildLog(root, kproto.CodecNone, *mb, *keys)
	defer l.Close()
	// The machine may be shared: alternate the measurements, three each,
	// and compare medians.
	var alone, busy, throttled []float64
	for range 3 {
		alone = append(alone, appendRate(root, "alone", *dur))
		busy = append(busy, appendWhileCleaning(root, l, 0, *dur))
		throttled = append(throttled, appendWhileCleaning(root, l, 32<<20, *dur))
	}
	a := median(alone)
	fmt.Printf("  no cleaning:                        %8.1f MB/s\n", a)
	fmt.Printf("  cleaning, unthrottled:              %8.1f MB/s  ratio %.2f\n", median(busy), median(busy)/a)
	fmt.Printf("  cleaning, throttled to 32 MiB/s:    %8.1f MB/s  ratio %.2f\n", median(throttled), median(throttled)/a)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// appendWhileCleaning measures appends while a goroutine cleans l over
// and over (throttled to limit bytes/s if > 0).
func appendWhileCleaning(root string, l *segment.Log, limit float64, d time.Duration) float64 {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		th := compact.NewThrottler(limit, nil, nil)
		for {
			select {
			case <-stop:
				return
			default:
			}
			cleanOnce(l, th)
		}
	}()
	rate := appendRate(root, "busy", d)
	close(stop)
	wg.Wait()
	return rate
}

func codecName(c int) string {
	return map[int]string{kproto.CodecNone: "none", kproto.CodecLZ4: "lz4"}[c]
}

// buildLog writes mb MiB of batches of 16 records of ~1 KiB, keys drawn
// round-robin from keys, in 64 MiB segments, and rolls.
func buildLog(root string, codec, mb, keys int) *segment.Log {
	d, err := os.MkdirTemp(root, "log-")
	if err != nil {
		log.Fatal(err)
	}
	l, err := segment.Open(d, segment.Options{SegmentBytes: 64 << 20})
	if err != nil {
		log.Fatal(err)
	}
	// Values half random, half text: lz4 halves them, as it does JSON.
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 1000)
	for i := range val {
		if i%2 == 0 {
			val[i] = byte(rng.IntN(256))
		} else {
			val[i] = 'a' + byte(i%7)
		}
	}
	k := 0
	for l.Size() < int64(mb)<<20 {
		var recs []byte
		for i := range 16 {
			key := fmt.Appendf(nil, "key-%08d", k%keys)
			k++
			for j := 0; j < len(val); j += 2 {
				val[j] = byte(rng.IntN(256))
			}
			recs = kproto.AppendRecord(recs, int64(i), int32(i), key, val, 0, nil)
		}
		comp, err := kproto.Compress(nil, codec, recs)
		if err != nil {
			log.Fatal(err)
		}
		now := time.Now().UnixMilli()
		b := kproto.AppendBatch(nil, kproto.BatchHeader{Attributes: int16(codec), LastOffsetDelta: 15,
			FirstTimestamp: now, MaxTimestamp: now, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 16}, comp)
		if _, err := l.Append(b, 16, now); err != nil {
			log.Fatal(err)
		}
	}
	if err := l.Roll(); err != nil {
		log.Fatal(err)
	}
	return l
}

// cleanOnce cleans all of l (from its start, as a first cleaning) and
// returns the seconds, the fraction of bytes kept, the map's MiB and the
// MiB the cleaning allocated on the heap.
func cleanOnce(l *segment.Log, th *compact.Throttler) (float64, float64, float64, float64) {
	m := compact.NewOffsetMap(16 << 20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	size := l.Size()
	start := time.Now()
	p := compact.PlanLog(l.ClosedSegments(), l.StartOffset(), -1, time.Now(), 0, 0)
	_, st, err := compact.Clean(l, p, compact.Options{Map: m, Throttle: th, Now: time.Now(),
		DeleteRetention: time.Hour, SegmentBytes: 64 << 20})
	if err != nil {
		log.Fatal(err)
	}
	secs := time.Since(start).Seconds()
	runtime.ReadMemStats(&after)
	return secs, float64(st.BytesWritten) / float64(size), float64(m.MemoryBytes()) / (1 << 20),
		float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20)
}

// appendRate appends 1 KiB batches to a new log for d and returns MB/s.
func appendRate(root, name string, d time.Duration) float64 {
	dir, err := os.MkdirTemp(root, "append-"+name)
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := segment.Open(dir, segment.Options{SegmentBytes: 64 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	b := segment.AppendBatch(nil, make([]byte, 1024-segment.HeaderSize), 1, 0)
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		if _, err := l.Append(b, 1, 0); err != nil {
			log.Fatal(err)
		}
		n++
		if n%256 == 0 {
			l.Sync()
		}
	}
	return float64(n) * 1024 / time.Since(start).Seconds() / 1e6
}
