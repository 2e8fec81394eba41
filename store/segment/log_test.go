package segment

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// layouts are the option sets the table tests run under: the same
// operations must give the same log whatever the segment size and index
// density.
var layouts = []struct {
	name string
	opts Options
}{
	{"one-segment", Options{}},
	{"small-segments", Options{SegmentBytes: 1000, IndexIntervalBytes: 100}},
	{"tiny-segments-dense-index", Options{SegmentBytes: 200, IndexIntervalBytes: 1}},
	{"sparse-index", Options{SegmentBytes: 5000, IndexIntervalBytes: 1 << 20}},
	{"preallocated", Options{SegmentBytes: 3000, IndexIntervalBytes: 100, PreallocateBytes: 512}},
	{"preallocated-whole-segment", Options{SegmentBytes: 5000, IndexIntervalBytes: 300, PreallocateBytes: 1 << 20}},
}

// fill appends n batches of varying count, size and timestamp.
func fill(t testing.TB, l *Log, m *model, n int) {
	for i := range n {
		appendEntry(t, l, m, int32(1+i%4), int64(1000+i*10), 10+(i*37)%150)
	}
}

func TestAppendReadRoll(t *testing.T) {
	for _, lay := range layouts {
		t.Run(lay.name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, lay.opts)
			defer l.Close()
			var m model
			fill(t, l, &m, 60)
			checkLog(t, l, &m)
			// Every offset, including those inside a batch, reads the batch holding it.
			for _, e := range m.entries {
				for off := e.base; off < e.base+int64(e.count); off++ {
					r, err := l.Read(off, 1)
					if err != nil {
						t.Fatalf("Read(%d): %v", off, err)
					}
					if r.BaseOffset != e.base || r.Len != int64(HeaderSize+len(e.payload)) {
						t.Fatalf("Read(%d) = base %d len %d, want base %d (one batch)", off, r.BaseOffset, r.Len, e.base)
					}
					r.Release()
				}
			}
			r, err := l.Read(m.next, 100)
			if err != nil || r.Len != 0 || r.BaseOffset != m.next {
				t.Fatalf("Read(NextOffset) = %+v, %v; want empty", r, err)
			}
			if _, err := l.Read(m.next+1, 100); !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("Read past end: %v", err)
			}
			if _, err := l.Read(-1, 100); !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("Read(-1): %v", err)
			}
			checkFiles(t, dir, l)
		})
	}
}

// checkFiles checks that every segment has its three files, named by base.
func checkFiles(t *testing.T, dir string, l *Log) {
	t.Helper()
	for _, s := range l.list() {
		for _, ext := range []string{".log", ".index", ".timeindex"} {
			if _, err := os.Stat(filepath.Join(dir, segmentName(s.base, ext))); err != nil {
				t.Fatalf("segment %d: %v", s.base, err)
			}
		}
	}
}

func TestReadMaxBytes(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{IndexIntervalBytes: 150})
	defer l.Close()
	var m model
	for range 20 {
		appendEntry(t, l, &m, 1, 1, 100-HeaderSize+39) // 139... all batches 139+... bytes
	}
	size := int64(HeaderSize + 100 - HeaderSize + 39)
	for _, tc := range []struct {
		off      int64
		maxBytes int
		want     int64 // batches
	}{
		{0, 0, 1}, {0, 1, 1}, {0, int(size), 1}, {0, int(size) + 1, 1}, {0, int(2 * size), 2},
		{3, int(5*size) - 1, 4}, {3, 1 << 20, 17}, {19, 1 << 20, 1},
	} {
		r, err := l.Read(tc.off, tc.maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		if r.Len != tc.want*size || r.Pos != tc.off*size || r.BaseOffset != tc.off {
			t.Errorf("Read(%d, %d) = pos %d len %d, want %d batches", tc.off, tc.maxBytes, r.Pos, r.Len, tc.want)
		}
		r.Release()
	}
}

func TestAppendInvalid(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{})
	defer l.Close()
	good := AppendBatch(nil, []byte("x"), 2, 5)
	cases := map[string]struct {
		b     []byte
		count int32
		ts    int64
	}{
		"short":        {good[:20], 2, 5},
		"length":       {append(append([]byte{}, good...), 0), 2, 5},
		"count":        {good, 3, 5},
		"zero count":   {good, 0, 5},
		"timestamp":    {good, 2, 6},
		"magic":        {func() []byte { b := append([]byte{}, good...); b[offMagic] = 1; return b }(), 2, 5},
		"no duplicate": {nil, 1, 0},
	}
	for name, tc := range cases {
		if _, err := l.Append(tc.b, tc.count, tc.ts); !errors.Is(err, ErrInvalidBatch) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if l.NextOffset() != 0 || l.Size() != 0 {
		t.Fatalf("invalid appends changed the log")
	}
}

func TestOffsetForTime(t *testing.T) {
	// Timestamps go up and down; the answer is the first batch whose max
	// timestamp reaches ts.
	ts := []int64{100, 200, 150, 300, 250, 400, 400, 500, -1, 600}
	for _, lay := range layouts {
		t.Run(lay.name, func(t *testing.T) {
			l := mustOpen(t, t.TempDir(), lay.opts)
			defer l.Close()
			var m model
			for round := range 3 {
				for _, v := range ts {
					appendEntry(t, l, &m, 2, v+int64(round)*1000, 100)
				}
			}
			want := func(q int64) int64 {
				for _, e := range m.entries {
					if e.ts >= q {
						return e.base
					}
				}
				return m.next
			}
			for q := int64(-5); q < 3700; q += 25 {
				got, err := l.OffsetForTime(q)
				if err != nil || got != want(q) {
					t.Fatalf("OffsetForTime(%d) = %d, %v; want %d", q, got, err, want(q))
				}
			}
			if err := l.SetStartOffset(21); err != nil {
				t.Fatal(err)
			}
			if got, _ := l.OffsetForTime(0); got != 21 {
				t.Fatalf("OffsetForTime below start = %d, want 21", got)
			}
		})
	}
}

func TestReopen(t *testing.T) {
	for _, lay := range layouts {
		t.Run(lay.name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, lay.opts)
			var m model
			fill(t, l, &m, 50)
			segs := len(l.list())
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Append(AppendBatch(nil, nil, 1, 0), 1, 0); !errors.Is(err, ErrClosed) {
				t.Fatalf("Append after Close: %v", err)
			}
			if _, err := l.Read(0, 1); !errors.Is(err, ErrClosed) {
				t.Fatalf("Read after Close: %v", err)
			}
			l = mustOpen(t, dir, lay.opts)
			defer l.Close()
			if len(l.list()) != segs {
				t.Fatalf("%d segments after reopen, want %d", len(l.list()), segs)
			}
			checkLog(t, l, &m)
			checkTimeAgainstModel(t, l, &m)
			fill(t, l, &m, 10)
			checkLog(t, l, &m)
		})
	}
}

func TestSegmentAgeRoll(t *testing.T) {
	clock := &fakeClock{time.Unix(100, 0)}
	l := mustOpen(t, t.TempDir(), Options{SegmentAge: time.Minute, Now: clock.Now})
	defer l.Close()
	var m model
	fill(t, l, &m, 3)
	clock.Advance(59 * time.Second)
	fill(t, l, &m, 1)
	if n := len(l.list()); n != 1 {
		t.Fatalf("%d segments before segment.ms", n)
	}
	clock.Advance(2 * time.Second)
	fill(t, l, &m, 1)
	if n := len(l.list()); n != 2 {
		t.Fatalf("%d segments after segment.ms, want 2", n)
	}
	if err := l.Roll(); err != nil || len(l.list()) != 3 {
		t.Fatalf("Roll: %v, %d segments", err, len(l.list()))
	}
	if err := l.Roll(); err != nil || len(l.list()) != 3 {
		t.Fatalf("Roll of an empty segment: %v, %d segments", err, len(l.list()))
	}
	checkLog(t, l, &m)
}

func TestFlushPolicies(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{FlushEntries: 3})
	var m model
	fill(t, l, &m, 7)
	l.mu.Lock()
	if l.mu.unflushed != 1 {
		t.Errorf("unflushed = %d after 7 appends with flush.messages=3", l.mu.unflushed)
	}
	l.mu.Unlock()
	l.Close()

	l = mustOpen(t, t.TempDir(), Options{FlushInterval: time.Millisecond})
	defer l.Close()
	fill(t, l, nil, 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		n := l.mu.unflushed
		l.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the flusher did not sync within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFileRangeOutlivesDeletion(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{SegmentBytes: 500})
	var m model
	fill(t, l, &m, 30)
	r, err := l.Read(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, r.Len)
	if _, err := r.ReadAt(want, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.SetStartOffset(l.NextOffset()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Truncate(0); err != nil {
		t.Fatal(err)
	}
	l.Close()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.WriteTo(f); err != nil || n != r.Len {
		t.Fatalf("WriteTo after deletion = %d, %v", n, err)
	}
	got, _ := os.ReadFile(f.Name())
	if string(got) != string(want) {
		t.Fatal("range content changed after its segment was deleted")
	}
	r.Release()
	r.Release()
}

func TestAppendAllocs(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{SegmentBytes: 1 << 30})
	defer l.Close()
	b := AppendBatch(nil, make([]byte, 1000), 10, 7)
	for range 1000 { // warm the index slices up
		if _, err := l.Append(b, 10, 7); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(2000, func() {
		if _, err := l.Append(b, 10, 7); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Append allocates %.2f times per call", allocs)
	}
}

func TestListSorted(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{SegmentBytes: 300})
	fill(t, l, nil, 40)
	l.Close()
	bases, err := (&Log{dir: dir, fs: osFS{}}).listBases()
	if err != nil || !sort.SliceIsSorted(bases, func(i, j int) bool { return bases[i] < bases[j] }) || len(bases) < 5 {
		t.Fatalf("bases %v, %v", bases, err)
	}
}
