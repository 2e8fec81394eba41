package segment

import (
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"
)

// writebackFS records the StartWriteback calls on .log files and passes
// them on to the OS file.
type writebackFS struct {
	FS
	mu     sync.Mutex
	ranges map[string][][2]int64 // file → [from, to) in call order
}

func (w *writebackFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := w.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &writebackFile{File: f, fs: w, name: name}, nil
}

func (w *writebackFS) calls(name string) [][2]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][2]int64(nil), w.ranges[name]...)
}

type writebackFile struct {
	File
	fs   *writebackFS
	name string
}

func (f *writebackFile) StartWriteback(off, n int64) error {
	f.fs.mu.Lock()
	f.fs.ranges[f.name] = append(f.fs.ranges[f.name], [2]int64{off, off + n})
	f.fs.mu.Unlock()
	if wb, ok := f.File.(writebacker); ok {
		return wb.StartWriteback(off, n)
	}
	return nil
}

// waitWriteback waits (bounded) until no writeback goroutine runs.
func waitWriteback(t *testing.T, l *Log) {
	t.Helper()
	for i := 0; l.writingBack.Load(); i++ {
		if i > 5000 {
			t.Fatal("writeback goroutine still running after 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWriteback: with WritebackBytes the appender starts the writeback of
// each segment's data in page-aligned, contiguous ranges of at least that
// size, never past the data nor into its last page, and keeps what is
// not started below WritebackBytes; a truncation restarts the ranges at
// its page; without the option nothing is started. The data reads back.
func TestWriteback(t *testing.T) {
	const chunk = 64 << 10
	for _, on := range []bool{true, false} {
		dir := t.TempDir()
		wfs := &writebackFS{FS: OS(), ranges: map[string][][2]int64{}}
		o := Options{SegmentBytes: 1 << 20, FS: wfs}
		if on {
			o.WritebackBytes = chunk
		}
		l := mustOpen(t, dir, o)
		m := &model{}
		for i := 0; i < 300; i++ {
			appendEntry(t, l, m, 3, int64(1000+i), 9000+i)
			waitWriteback(t, l)
			s := l.active()
			got := wfs.calls(s.logPath)
			var started int64
			for j, r := range got {
				if r[0]%writebackPage != 0 || r[1]%writebackPage != 0 || r[1]-r[0] < chunk || (j > 0 && r[0] != got[j-1][1]) || (j == 0 && r[0] != 0) {
					t.Fatalf("append %d: ranges %v: want contiguous, page-aligned, from 0, each >= %d", i, got, chunk)
				}
				started = r[1]
			}
			size := s.size.Load()
			switch {
			case !on && len(got) > 0:
				t.Fatalf("WritebackBytes 0 started writebacks: %v", got)
			case on && (started > size&^(writebackPage-1) || size&^(writebackPage-1)-started >= chunk):
				t.Fatalf("append %d: writeback started to %d with %d bytes of data", i, started, size)
			}
		}
		if len(l.list()) < 3 {
			t.Fatalf("%d segments; the test wants rolls", len(l.list()))
		}
		checkLog(t, l, m)
		if !on {
			l.Close()
			continue
		}
		s := l.active()
		before := len(wfs.calls(s.logPath))
		cut := s.next.Load() - 30 // a few batches back, below what was started
		next, err := l.Truncate(cut)
		if err != nil {
			t.Fatal(err)
		}
		m.truncate(next)
		newEnd := s.size.Load()
		for i := 0; i < 20; i++ {
			appendEntry(t, l, m, 3, 5000, 9000)
			waitWriteback(t, l)
		}
		got := wfs.calls(s.logPath)
		if len(got) <= before || got[before][0] > newEnd&^(writebackPage-1) {
			t.Fatalf("after truncating to %d bytes: ranges %v (the first %d before)", newEnd, got, before)
		}
		checkLog(t, l, m)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
