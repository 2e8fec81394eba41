package segment

import (
	"errors"
	"testing"
	"time"
)

func TestTruncate(t *testing.T) {
	cases := []struct {
		name string
		to   int64 // in offsets; batches cover 1..4 offsets, see fill
	}{
		{"at end", -1}, {"past end", 10_000}, {"middle of first segment", 7}, {"straddling batch", 8},
		{"middle", 70}, {"just before end", -2}, {"zero", 0}, {"one", 1},
	}
	for _, lay := range layouts {
		for _, tc := range cases {
			t.Run(lay.name+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				l := mustOpen(t, dir, lay.opts)
				var m model
				fill(t, l, &m, 60)
				to := tc.to
				if to < 0 {
					to = m.next + 1 + to
				}
				wantEnd := m.truncate(to)
				if to >= l.NextOffset() {
					wantEnd = l.NextOffset()
				}
				end, err := l.Truncate(to)
				if err != nil || end != wantEnd {
					t.Fatalf("Truncate(%d) = %d, %v; want %d", to, end, err, wantEnd)
				}
				if end == 0 && to == 0 {
					m = model{}
				}
				checkLog(t, l, &m)
				fill(t, l, &m, 10) // appends continue at the new end
				checkLog(t, l, &m)
				checkFiles(t, dir, l)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				l = mustOpen(t, dir, lay.opts)
				checkLog(t, l, &m)
				checkTimeAgainstModel(t, l, &m)
				l.Close()
			})
		}
	}
}

func checkTimeAgainstModel(t *testing.T, l *Log, m *model) {
	t.Helper()
	for q := int64(990); q < 1700; q += 7 {
		want := m.next
		for _, e := range m.entries {
			if e.ts >= q && e.base+int64(e.count) > l.StartOffset() {
				want = max(e.base, l.StartOffset())
				break
			}
		}
		if got, err := l.OffsetForTime(q); err != nil || got != want {
			t.Fatalf("OffsetForTime(%d) = %d, %v; want %d", q, got, err, want)
		}
	}
}

func TestTruncateBelowFirstSegment(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{SegmentBytes: 500})
	var m model
	fill(t, l, &m, 30)
	if err := l.SetStartOffset(40); err != nil {
		t.Fatal(err)
	}
	first := l.list()[0].base
	end, err := l.Truncate(first - 1)
	if err != nil || end != first-1 || l.StartOffset() != first-1 || l.NextOffset() != first-1 {
		t.Fatalf("Truncate below first = %d, %v; start %d next %d", end, err, l.StartOffset(), l.NextOffset())
	}
	l.Close()
	l = mustOpen(t, dir, Options{SegmentBytes: 500})
	defer l.Close()
	if l.StartOffset() != first-1 || l.NextOffset() != first-1 {
		t.Fatalf("after reopen start %d next %d", l.StartOffset(), l.NextOffset())
	}
}

func TestRetention(t *testing.T) {
	epoch := time.UnixMilli(1_000_000)
	cases := []struct {
		name        string
		opts        Options
		advance     time.Duration
		wantDeleted int
		wantSegs    int
	}{
		{"nothing configured", Options{}, time.Hour, 0, 6},
		{"age keeps young", Options{RetentionAge: time.Hour}, time.Minute, 0, 6},
		{"age deletes old", Options{RetentionAge: time.Second}, 25 * time.Second, 3, 3},
		{"age deletes all and rolls", Options{RetentionAge: time.Second}, time.Hour, 6, 1},
		{"bytes", Options{RetentionBytes: 2000}, 0, 2, 4},
		{"bytes exact", Options{RetentionBytes: 1800}, 0, 3, 3},
		{"bytes keep all", Options{RetentionBytes: 1 << 20}, 0, 0, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{epoch}
			o := tc.opts
			o.SegmentBytes, o.Now = 700, clock.Now
			l := mustOpen(t, t.TempDir(), o)
			defer l.Close()
			var m model
			// 6 segments of 3 batches of ~200 bytes, the k-th with timestamps epoch+k*10s.
			for k := range 6 {
				for range 3 {
					appendEntry(t, l, &m, 2, epoch.UnixMilli()+int64(k)*10_000, 200-HeaderSize)
				}
			}
			if n := len(l.list()); n != 6 {
				t.Fatalf("%d segments, want 6", n)
			}
			clock.Advance(tc.advance)
			n, err := l.EnforceRetention()
			if err != nil || n != tc.wantDeleted || len(l.list()) != tc.wantSegs {
				t.Fatalf("EnforceRetention = %d, %v; %d segments; want %d deleted, %d left", n, err, len(l.list()), tc.wantDeleted, tc.wantSegs)
			}
			if l.StartOffset() != l.list()[0].base {
				t.Fatalf("start %d, first segment %d", l.StartOffset(), l.list()[0].base)
			}
			if _, err := l.Read(l.StartOffset()-1, 1); l.StartOffset() > 0 && !errors.Is(err, ErrOffsetOutOfRange) {
				t.Fatalf("read below start: %v", err)
			}
			checkLog(t, l, &m)
			appendEntry(t, l, &m, 1, 0, 10)
			checkLog(t, l, &m)
		})
	}
}

func TestSetStartOffset(t *testing.T) {
	dir := t.TempDir()
	o := Options{SegmentBytes: 600}
	l := mustOpen(t, dir, o)
	var m model
	fill(t, l, &m, 40)
	segsBefore := len(l.list())
	for _, off := range []int64{5, 3, 33, 33} {
		if err := l.SetStartOffset(off); err != nil {
			t.Fatal(err)
		}
	}
	if l.StartOffset() != 33 || len(l.list()) >= segsBefore || l.list()[0].base > 33 {
		t.Fatalf("start %d, %d segments (was %d), first base %d", l.StartOffset(), len(l.list()), segsBefore, l.list()[0].base)
	}
	if _, err := l.Read(32, 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read below start: %v", err)
	}
	r, err := l.Read(33, 1)
	if err != nil || r.BaseOffset > 33 {
		t.Fatalf("Read(start) = %+v, %v", r, err)
	}
	r.Release()
	checkLog(t, l, &m)
	l.Close()
	l = mustOpen(t, dir, o)
	if l.StartOffset() != 33 {
		t.Fatalf("start after reopen = %d", l.StartOffset())
	}
	checkLog(t, l, &m)
	// Beyond the end: the log restarts there (a raft snapshot ahead of the log).
	if err := l.SetStartOffset(m.next + 100); err != nil {
		t.Fatal(err)
	}
	m = model{next: m.next + 100}
	checkLog(t, l, &m)
	appendEntry(t, l, &m, 1, 1, 1)
	l.Close()
	l = mustOpen(t, dir, o)
	defer l.Close()
	checkLog(t, l, &m)
	if l.StartOffset() != m.next-1 {
		t.Fatalf("start %d", l.StartOffset())
	}
}
