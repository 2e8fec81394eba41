package segment

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gapLog returns a log of 60 one-offset batches (timestamp = offset) in
// segments of about 10 batches, whose closed segments were rewritten to
// keep only the batches whose offset keep accepts.
func gapLog(t *testing.T, dir string, keep func(off int64) bool) (*Log, map[int64]bool) {
	t.Helper()
	l := mustOpen(t, dir, Options{SegmentBytes: 10 * (HeaderSize + 40), IndexIntervalBytes: 1})
	for i := range 60 {
		b := AppendBatch(nil, payloadFor(int64(i), 40), 1, int64(i))
		if _, err := l.Append(b, 1, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	kept := map[int64]bool{}
	closed := l.ClosedSegments()
	w, err := l.BeginRewrite(closed[0].Base, closed[len(closed)-1].Next)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range closed {
		err := l.ScanSegment(s.Base, func(b []byte) error {
			if off := BatchBaseOffset(b); keep(off) {
				kept[off] = true
				return w.Append(b)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	for off := closed[len(closed)-1].Next; off < 60; off++ {
		kept[off] = true
	}
	return l, kept
}

// checkGaps reads every offset of the log: a kept offset reads its own
// batch, an offset in a gap the next kept batch; OffsetForTime finds the
// first kept batch at or after a time.
func checkGaps(t *testing.T, l *Log, kept map[int64]bool) {
	t.Helper()
	for off := l.StartOffset(); off < l.NextOffset(); off++ {
		want := off
		for !kept[want] && want < l.NextOffset() {
			want++
		}
		r, err := l.Read(off, 1)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		if r.BaseOffset != want || r.NextOffset != want+1 {
			t.Fatalf("Read(%d) = batch %d (next %d), want %d", off, r.BaseOffset, r.NextOffset, want)
		}
		r.Release()
		if got, err := l.OffsetForTime(off); err != nil || got != want {
			t.Fatalf("OffsetForTime(%d) = %d, %v; want %d", off, got, err, want)
		}
	}
}

// TestRewriteLeavesGapsThatReadsSkip: after a rewrite that keeps every
// third batch of the closed segments, reads of any offset (in a gap or
// not) and time lookups give the next kept batch, before and after a
// reopen, whose index check accepts the rewritten segment as it is.
func TestRewriteLeavesGapsThatReadsSkip(t *testing.T) {
	dir := t.TempDir()
	l, kept := gapLog(t, dir, func(off int64) bool { return off%3 == 2 })
	checkGaps(t, l, kept)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	l = mustOpen(t, dir, Options{SegmentBytes: 10 * (HeaderSize + 40), IndexIntervalBytes: 1, Logger: textLogger(&logs)})
	defer l.Close()
	if strings.Contains(logs.String(), "rebuilding indexes") {
		t.Fatalf("the rewritten segment's indexes were rebuilt on reopen: %s", logs.String())
	}
	checkGaps(t, l, kept)
	names, _ := filepath.Glob(filepath.Join(dir, "*.cleaned"))
	swaps, _ := filepath.Glob(filepath.Join(dir, "*.swap"))
	if len(names)+len(swaps) > 0 {
		t.Fatalf("leftover rewrite files: %v %v", names, swaps)
	}
}

// TestRewriteToNothing: a rewrite that keeps nothing leaves an empty
// segment that reads skip, before and after a reopen.
func TestRewriteToNothing(t *testing.T) {
	dir := t.TempDir()
	l, kept := gapLog(t, dir, func(int64) bool { return false })
	checkGaps(t, l, kept)
	l.Close()
	l = mustOpen(t, dir, Options{SegmentBytes: 10 * (HeaderSize + 40), IndexIntervalBytes: 1})
	defer l.Close()
	checkGaps(t, l, kept)
}

// TestRewriteStale: a rewrite whose segments retention deleted meanwhile
// fails with ErrRewriteStale and leaves the log and directory as they
// were.
func TestRewriteStale(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, Options{SegmentBytes: 300})
	var m model
	fill(t, l, &m, 30)
	closed := l.ClosedSegments()
	w, err := l.BeginRewrite(closed[0].Base, closed[1].Next)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetStartOffset(closed[1].Base); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); !errors.Is(err, ErrRewriteStale) {
		t.Fatalf("Commit after the segments went: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".cleaned") || strings.Contains(e.Name(), ".swap") {
			t.Fatalf("leftover %s", e.Name())
		}
	}
	l.Close()
}

// TestAppendAtKeepsOffsets: a follower's AppendAt keeps the leader's
// offsets across gaps; an offset below the end is refused.
func TestAppendAtKeepsOffsets(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Options{SegmentBytes: 300})
	defer l.Close()
	kept := map[int64]bool{}
	for _, at := range []int64{0, 5, 6, 40, 41, 1000} {
		b := AppendBatch(nil, payloadFor(at, 100), 1, at)
		if off, err := l.AppendAt(b, 1, at, at); err != nil || off != at {
			t.Fatalf("AppendAt(%d) = %d, %v", at, off, err)
		}
		kept[at] = true
	}
	if _, err := l.AppendAt(AppendBatch(nil, nil, 1, 0), 1, 0, 1000); !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("AppendAt below the end: %v", err)
	}
	if l.NextOffset() != 1001 {
		t.Fatalf("NextOffset %d", l.NextOffset())
	}
	checkGaps(t, l, kept)
}

func textLogger(w *strings.Builder) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
