package segment

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"
)

func fileLen(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func warnLogger(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// checkSegmentSizes checks that every closed segment's file is exactly its
// batches and that Size is the sum of the batches in the model.
func checkSegmentSizes(t *testing.T, dir string, l *Log, m *model) {
	t.Helper()
	segs := l.list()
	var sum int64
	for _, s := range segs {
		sum += s.size.Load()
		if s != segs[len(segs)-1] {
			if n := fileLen(t, s.logPath); n != s.size.Load() {
				t.Fatalf("closed segment %d: file %d bytes, data %d", s.base, n, s.size.Load())
			}
		}
	}
	if l.Size() != sum {
		t.Fatalf("Size = %d, segments hold %d", l.Size(), sum)
	}
	var want int64
	for _, e := range m.entries {
		if e.base >= segs[0].base {
			want += int64(HeaderSize + len(e.payload))
		}
	}
	if sum != want {
		t.Fatalf("segments hold %d bytes, model %d", sum, want)
	}
}

// TestPreallocate: the active file runs ahead of the data in chunks, Size,
// reads, time lookups, truncation and retention see only the data, and
// Roll and Close cut the zeros off; a reopen after a crash (no Close) takes
// the zeros for the end of the data without a warning.
func TestPreallocate(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{t: time.Unix(1e6, 0)}
	o := Options{SegmentBytes: 4000, IndexIntervalBytes: 100, PreallocateBytes: 1024,
		RetentionBytes: 6000, Now: clk.Now}
	l := mustOpen(t, dir, o)
	var m model
	fill(t, l, &m, 5)
	act := l.active()
	if n := fileLen(t, act.logPath); n != 1024 || act.size.Load() >= n {
		t.Fatalf("active file %d bytes for %d of data; want 1024", n, act.size.Load())
	}
	fill(t, l, &m, 100)
	if len(l.list()) < 3 {
		t.Fatalf("%d segments, want several", len(l.list()))
	}
	act = l.active()
	if n := fileLen(t, act.logPath); n%1024 != 0 && n != o.SegmentBytes || n <= act.size.Load() {
		t.Fatalf("active file %d bytes for %d of data", n, act.size.Load())
	}
	checkLog(t, l, &m)
	checkSegmentSizes(t, dir, l, &m)
	checkTimeAgainstModel(t, l, &m)

	// Truncate into the active segment, then into an earlier one.
	for _, to := range []int64{m.next - 2, m.next - 40} {
		wantEnd := m.truncate(to)
		if end, err := l.Truncate(to); err != nil || end != wantEnd {
			t.Fatalf("Truncate(%d) = %d, %v; want %d", to, end, err, wantEnd)
		}
		checkLog(t, l, &m)
		checkSegmentSizes(t, dir, l, &m)
		fill(t, l, &m, 7)
		checkLog(t, l, &m)
		checkSegmentSizes(t, dir, l, &m)
	}

	// Retention by bytes counts data, not preallocated zeros.
	n, err := l.EnforceRetention()
	if err != nil || n == 0 {
		t.Fatalf("EnforceRetention = %d, %v", n, err)
	}
	if l.Size() < o.RetentionBytes || l.Size()-l.list()[0].size.Load() >= o.RetentionBytes {
		t.Fatalf("after retention Size = %d (first segment %d), want just above %d", l.Size(), l.list()[0].size.Load(), o.RetentionBytes)
	}
	checkLog(t, l, &m)
	checkSegmentSizes(t, dir, l, &m)

	// Close cuts the zeros off.
	act = l.active()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := fileLen(t, act.logPath); n != act.size.Load() {
		t.Fatalf("after Close the active file is %d bytes, data %d", n, act.size.Load())
	}

	// A crash: the process dies with the file preallocated.
	var warn bytes.Buffer
	o.Logger = warnLogger(&warn)
	l = mustOpen(t, dir, o)
	fill(t, l, &m, 3)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	act = l.active()
	if fileLen(t, act.logPath) <= act.size.Load() {
		t.Fatal("active file not preallocated")
	}
	crashClose(l)
	l = mustOpen(t, dir, o)
	defer l.Close()
	if warn.Len() != 0 {
		t.Fatalf("recovery of a preallocated tail warned: %s", warn.String())
	}
	checkLog(t, l, &m)
	checkSegmentSizes(t, dir, l, &m)
	if n := fileLen(t, l.active().logPath); n != l.active().size.Load() {
		t.Fatalf("recovery left a %d-byte file for %d bytes of data", n, l.active().size.Load())
	}
	fill(t, l, &m, 30)
	checkLog(t, l, &m)
}

// crashClose drops the log's files without the Close that would cut the
// preallocated zeros off, as a kill -9 would (the written bytes are in the
// page cache, so they survive).
func crashClose(l *Log) {
	l.mu.Lock()
	l.closed.Store(true)
	for _, s := range l.list() {
		s.release()
	}
	l.mu.Unlock()
	close(l.done)
	l.wg.Wait()
}

// TestRecoverZeroTail: an active segment of valid batches followed by zeros
// (of any length, even shorter than a header) recovers to the batches,
// without a warning, with or without preallocation on; garbage after the
// zeros is a torn tail and warned about.
func TestRecoverZeroTail(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tail  []byte
		warns bool
	}{
		{"zeros", make([]byte, 5000), false},
		{"few-zeros", make([]byte, 7), false},
		{"zeros-then-garbage", append(make([]byte, 300), 1, 2, 3), true},
	} {
		for _, pre := range []int64{0, 4096} {
			t.Run(tc.name, func(t *testing.T) {
				dir := t.TempDir()
				o := Options{IndexIntervalBytes: 100, PreallocateBytes: pre}
				m := buildLog(t, dir, o, 20)
				if err := appendFile(segPath(dir, 0, ".log"), tc.tail); err != nil {
					t.Fatal(err)
				}
				var warn bytes.Buffer
				o.Logger = warnLogger(&warn)
				l := mustOpen(t, dir, o)
				defer l.Close()
				if (warn.Len() != 0) != tc.warns {
					t.Fatalf("warned %q, want a warning: %v", warn.String(), tc.warns)
				}
				checkLog(t, l, m)
				checkSegmentSizes(t, dir, l, m)
				fill(t, l, m, 10)
				checkLog(t, l, m)
			})
		}
	}
}

// TestRecoverPaddedClosedSegment: an earlier segment left with zeros after
// its batches (preallocated, not cut back) opens with preallocation on, with
// its indexes intact or lost, and its zeros are cut off; with preallocation
// off it is what it always was, a corrupt segment.
func TestRecoverPaddedClosedSegment(t *testing.T) {
	for _, lose := range []bool{false, true} {
		dir := t.TempDir()
		o := Options{SegmentBytes: 1500, IndexIntervalBytes: 100, PreallocateBytes: 4096}
		m := buildLog(t, dir, o, 60)
		first := segPath(dir, 0, ".log")
		size := fileLen(t, first)
		if err := appendFile(first, make([]byte, 4096-size)); err != nil {
			t.Fatal(err)
		}
		if lose {
			os.Remove(segPath(dir, 0, ".index"))
			os.Remove(segPath(dir, 0, ".timeindex"))
		}
		if lose {
			// Without preallocation the rebuild reports it.
			var ce *CorruptError
			if _, err := Open(dir, Options{SegmentBytes: 1500, IndexIntervalBytes: 100}); !errors.As(err, &ce) {
				t.Fatalf("Open without preallocation = %v, want a CorruptError", err)
			}
		}
		l := mustOpen(t, dir, o)
		if n := fileLen(t, first); n != size {
			t.Fatalf("lose=%v: padded segment is %d bytes after Open, want %d", lose, n, size)
		}
		checkLog(t, l, m)
		checkSegmentSizes(t, dir, l, m)
		checkTimeAgainstModel(t, l, m)
		fill(t, l, m, 20)
		checkLog(t, l, m)
		l.Close()
	}
}
