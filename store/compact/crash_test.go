package compact

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkafka/zkafka/store/segment"
)

var errCrash = errors.New("crashed")

// crashFS is the OS file system until its budget of mutating operations
// (creating or truncating opens, writes, truncations, fsyncs, renames,
// removals, directory fsyncs) is spent; from then on every mutating
// operation fails and changes nothing, which leaves the directory as a
// kill -9 at that point would (the page cache keeps what was written).
type crashFS struct {
	segment.FS
	mu    sync.Mutex
	left  int // operations left; <0: unlimited
	ops   int // operations done
	names []string
}

func (c *crashFS) step(what string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left == 0 {
		return errCrash
	}
	if c.left > 0 {
		c.left--
	}
	c.ops++
	c.names = append(c.names, what)
	return nil
}

func (c *crashFS) arm(n int) { c.mu.Lock(); c.left, c.ops, c.names = n, 0, nil; c.mu.Unlock() }

func (c *crashFS) OpenFile(name string, flag int, perm fs.FileMode) (segment.File, error) {
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		if err := c.step("open " + name); err != nil {
			return nil, err
		}
	}
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &crashFile{File: f, c: c, name: name}, nil
}

func (c *crashFS) Remove(name string) error {
	if err := c.step("remove " + name); err != nil {
		return err
	}
	return c.FS.Remove(name)
}

func (c *crashFS) Rename(a, b string) error {
	if err := c.step("rename " + a); err != nil {
		return err
	}
	return c.FS.Rename(a, b)
}

func (c *crashFS) SyncDir(name string) error {
	if err := c.step("syncdir"); err != nil {
		return err
	}
	return c.FS.SyncDir(name)
}

type crashFile struct {
	segment.File
	c    *crashFS
	name string
}

func (f *crashFile) OSFile() *os.File {
	if o, ok := f.File.(segment.OSFiler); ok {
		return o.OSFile()
	}
	return nil
}

func (f *crashFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.c.step("write " + f.name); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *crashFile) Truncate(n int64) error {
	if err := f.c.step("truncate " + f.name); err != nil {
		return err
	}
	return f.File.Truncate(n)
}

func (f *crashFile) Sync() error {
	if err := f.c.step("sync " + f.name); err != nil {
		return err
	}
	return f.File.Sync()
}

// crashLog fills dir with a deterministic log to clean: several closed
// segments of updates and tombstones of a few keys, in several codecs.
func crashLog(t *testing.T, dir string, fsys segment.FS) *segment.Log {
	t.Helper()
	l, err := segment.Open(dir, segment.Options{SegmentBytes: 700, IndexIntervalBytes: 64, FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 40 {
		s := batchSpec{codec: i % 5, ts: epoch.UnixMilli(), pid: -1}
		if i%6 == 0 {
			s.pid, s.seq = 7, int32(i)
		}
		for range 1 + rng.IntN(4) {
			var v []byte
			if rng.IntN(4) != 0 {
				v = fmt.Appendf(nil, "v%d", i)
			}
			s.recs = append(s.recs, rec{key(rng.IntN(9)), v})
		}
		s.seq = int32(i * 4)
		appendSpec(t, l, s)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	return l
}

// cleanOnce runs one full cleaning of l, calling after (if not nil) after
// each group is swapped in.
func cleanOnce(l *segment.Log, after func()) error {
	p := PlanLog(l.ClosedSegments(), l.StartOffset(), -1, epoch, 0, 0)
	_, _, err := Clean(l, p, Options{Map: NewOffsetMap(1 << 16), Now: epoch, DeleteRetention: time.Hour,
		SegmentBytes: 1500, afterCommit: after})
	return err
}

func openRead(t *testing.T, dir string, fsys segment.FS) ([]readRec, error) {
	t.Helper()
	l, err := segment.Open(dir, segment.Options{SegmentBytes: 700, IndexIntervalBytes: 64, FS: fsys})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return readAll(t, l).recs, nil
}

// TestCleanCrashAtEveryStep crashes a cleaning after each of its file
// system operations in turn (writing the .cleaned files, naming the swap,
// deleting the old segments, renaming into place), and crashes the
// recovery of each such state at each of its steps too: every reopen
// reads back exactly the log before the cleaning or exactly the log after
// it (or, as the cleaner swaps groups of segments one at a time, between
// two swaps), never a mix within a group, and never loses a record.
func TestCleanCrashAtEveryStep(t *testing.T) {
	ref := t.TempDir()
	l := crashLog(t, ref, nil)
	// The valid states: before, and after each group's swap.
	states := [][]readRec{readAll(t, l).recs}
	if err := cleanOnce(l, func() { states = append(states, readAll(t, l).recs) }); err != nil {
		t.Fatal(err)
	}
	after := readAll(t, l).recs
	l.Close()
	if len(states) < 3 || reflect.DeepEqual(states[0], after) {
		t.Fatalf("the cleaning swapped %d groups and changed %v; the test would prove little", len(states)-1, !reflect.DeepEqual(states[0], after))
	}
	check := func(n int, what string, got []readRec) {
		t.Helper()
		for _, s := range states {
			if reflect.DeepEqual(got, s) {
				return
			}
		}
		t.Fatalf("crash after %d operations (%s): read %d records, not the log before (%d), after (%d) or between two group swaps",
			n, what, len(got), len(states[0]), len(after))
	}
	sawSwap := false
	for n := 0; ; n++ {
		dir := t.TempDir()
		cfs := &crashFS{FS: segment.OS(), left: -1}
		l := crashLog(t, dir, cfs)
		cfs.arm(n)
		err := cleanOnce(l, nil)
		names := append([]string(nil), cfs.names...)
		l.Close()
		last := "none"
		if len(names) > 0 {
			last = names[len(names)-1]
		}
		if hasSwap(t, dir) {
			sawSwap = true
			// Crash the recovery too, at each step, then recover fully.
			for k := 0; ; k++ {
				rdir := t.TempDir()
				copyDir(t, dir, rdir)
				rfs := &crashFS{FS: segment.OS(), left: k}
				if _, err := openRead(t, rdir, rfs); err == nil {
					break
				}
				got, err := openRead(t, rdir, nil)
				if err != nil {
					t.Fatalf("recovery after a crash in recovery (%d, %d): %v", n, k, err)
				}
				check(n, fmt.Sprintf("%s, then recovery crashed after %d", last, k), got)
			}
		}
		got, err2 := openRead(t, dir, nil)
		if err2 != nil {
			t.Fatalf("reopen after a crash at %d (%s): %v", n, last, err2)
		}
		check(n, last, got)
		if err == nil {
			if !reflect.DeepEqual(got, after) {
				t.Fatal("a cleaning that succeeded did not leave the cleaned log")
			}
			t.Logf("a cleaning takes %d file system operations; crashed after each", n)
			break
		}
		if !errors.Is(err, errCrash) && !strings.Contains(err.Error(), errCrash.Error()) {
			t.Fatalf("cleaning failed with %v, not the injected crash", err)
		}
	}
	if !sawSwap {
		t.Fatal("no crash left a committed swap behind: the roll-forward path was not tested")
	}
}

func hasSwap(t *testing.T, dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".swap") {
			return true
		}
	}
	return false
}

func copyDir(t *testing.T, from, to string) {
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(from + "/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+"/"+e.Name(), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
