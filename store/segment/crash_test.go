package segment

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	crashEnv         = "SEGMENT_CRASH_CHILD_DIR"
	crashPreallocEnv = "SEGMENT_CRASH_CHILD_PREALLOCATE"
)

// crashOptions are the child's options; preallocate is PreallocateBytes.
func crashOptions(preallocate int64) Options {
	return Options{SegmentBytes: 64 << 10, IndexIntervalBytes: 1024, PreallocateBytes: preallocate}
}

// crashBatch is the batch the crash child appends at offset off: its size
// and count are derived from the offset so the parent can check it.
func crashBatch(off int64) ([]byte, int32) {
	count := int32(1 + off%3)
	return AppendBatch(nil, payloadFor(off, int(off*131%3000)), count, off), count
}

// TestCrashChild is the child of TestCrash: it appends and fsyncs in a
// loop and prints the NextOffset after every successful Sync, until killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("only runs as the child of TestCrash")
	}
	pre, _ := strconv.ParseInt(os.Getenv(crashPreallocEnv), 10, 64)
	l, err := Open(dir, crashOptions(pre))
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	out := os.Stdout
	for i := 0; ; i++ {
		off := l.NextOffset()
		b, count := crashBatch(off)
		if _, err := l.Append(b, count, off); err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			os.Exit(2)
		}
		if i%5 == 0 {
			if err := l.Sync(); err != nil {
				fmt.Fprintln(os.Stderr, "sync:", err)
				os.Exit(2)
			}
			fmt.Fprintf(out, "%d\n", l.NextOffset())
		}
	}
}

// TestCrash kills a child that appends and fsyncs with SIGKILL at random
// moments and checks after each kill that every batch the child had
// reported as flushed is there, intact and in order, and that appends
// continue at the right offset; with and without preallocation (then the
// kill leaves zeros after the data, and the segments roll within a chunk).
func TestCrash(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	for _, pre := range []int64{0, 16 << 10} {
		t.Run(fmt.Sprintf("preallocate=%d", pre), func(t *testing.T) { testCrash(t, pre) })
	}
}

func testCrash(t *testing.T, pre int64) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	deadline := time.Now().Add(10 * time.Second)
	var flushed int64
	for round := 0; round < 20 && time.Now().Before(deadline); round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir, crashPreallocEnv+"="+strconv.FormatInt(pre, 10))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rng.IntN(150)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		if strings.Contains(stderr.String(), "open:") || strings.Contains(stderr.String(), "append:") {
			t.Fatalf("round %d: child failed: %s", round, stderr.String())
		}
		flushed = max(flushed, lastReported(stdout.Bytes()))
		verifyCrashLog(t, dir, round, flushed, pre)
	}
	if flushed == 0 {
		t.Fatal("the child never reported a flushed offset")
	}
}

// lastReported returns the last complete line of the child's output.
func lastReported(out []byte) int64 {
	var last int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil {
			last = v
		}
	}
	return last
}

func verifyCrashLog(t *testing.T, dir string, round int, flushed, pre int64) {
	t.Helper()
	var warn bytes.Buffer
	o := crashOptions(pre)
	o.Logger = slog.New(slog.NewTextHandler(&warn, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := Open(dir, o)
	if err != nil {
		t.Fatalf("round %d: Open after kill: %v", round, err)
	}
	defer l.Close()
	if l.NextOffset() < flushed {
		t.Fatalf("round %d: NextOffset %d < flushed %d", round, l.NextOffset(), flushed)
	}
	next := int64(0)
	for next < l.NextOffset() {
		b, err := l.ReadBatches(next, 1<<20, nil)
		if err != nil {
			t.Fatalf("round %d: read %d: %v", round, next, err)
		}
		es, err := parseBatches(b)
		if err != nil {
			t.Fatalf("round %d: offset %d: %v", round, next, err)
		}
		for _, e := range es {
			want, count := crashBatch(e.base)
			if e.base != next || e.count != count || !bytes.Equal(e.payload, Payload(want)) || e.ts != e.base {
				t.Fatalf("round %d: batch at %d: base %d count %d len %d ts %d", round, next, e.base, e.count, len(e.payload), e.ts)
			}
			next += int64(e.count)
		}
	}
	if pre > 0 {
		for _, s := range l.list() {
			fi, err := os.Stat(s.logPath)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != s.size.Load() {
				t.Fatalf("round %d: segment %d: file %d bytes, data %d", round, s.base, fi.Size(), s.size.Load())
			}
		}
		if warn.Len() > 0 {
			t.Logf("round %d: recovery: %s", round, warn.String()) // a torn batch, not the zeros
		}
	}
	end := l.NextOffset()
	b, count := crashBatch(end)
	if off, err := l.Append(b, count, end); err != nil || off != end {
		t.Fatalf("round %d: append after recovery = %d, %v; want %d", round, off, err, end)
	}
}
