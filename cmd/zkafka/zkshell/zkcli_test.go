package zkshell

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/quorum"
)

// startServer starts an in-process zkafka ZooKeeper server on 127.0.0.1
// and returns its address.
func startServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := quorum.DefaultConfig(t.TempDir())
	cfg.ExtendedTypes = true
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := quorum.StartWithListener(cfg, log, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// step is one command of a zkCli script and what zkCli printed for it.
type step struct {
	line string
	want []string
}

// loadScript reads a script in compat-tests/zkcli's format: "> command"
// lines, each followed by zkCli's output (stdout and stderr, normalized).
func loadScript(t *testing.T, path string) []step {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "#") && len(steps) == 0:
		case strings.HasPrefix(line, "> "):
			steps = append(steps, step{line: line[2:]})
		case len(steps) > 0:
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		}
	}
	for i := range steps {
		steps[i].want = trimEmpty(steps[i].want)
	}
	return steps
}

func trimEmpty(lines []string) []string {
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// normalize masks what differs from run to run, as zkcli_check.py does.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`^(cZxid|mZxid|pZxid) = 0x[0-9a-f]+$`), "${1} = 0xZXID"},
	{regexp.MustCompile(`^(ctime|mtime) = .*$`), "${1} = TIME"},
	{regexp.MustCompile(`^ephemeralOwner = 0x[0-9a-f]*[1-9a-f][0-9a-f]*$`), "ephemeralOwner = 0xSESSION"},
}

func normalize(line string) string {
	for _, n := range normalizers {
		line = n.re.ReplaceAllString(line, n.with)
	}
	return line
}

// runScript runs the steps through one shell connected to addr, output
// and errors merged as zkCli's are on a terminal, and compares each
// step's output with zkCli's.
func runScript(t *testing.T, addr string, steps []step) {
	var out bytes.Buffer
	s, err := Dial(addr, 10*time.Second, &out, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.reading = true // as zkCli reading a script
	gots := make([][]string, len(steps))
	for i, st := range steps {
		out.Reset()
		s.Run(st.line)
		for _, l := range strings.Split(out.String(), "\n") {
			gots[i] = append(gots[i], normalize(l))
		}
		gots[i] = trimEmpty(gots[i])
	}
	for i, st := range steps {
		got, want := gots[i], st.want
		if !sameOutput(st.line, got, want) && !eventMovedOneStep(gots, steps, i) {
			t.Errorf("%s:\n got: %q\nwant: %q", st.line, got, want)
		}
	}
}

// eventMovedOneStep reports whether step i differs from zkCli's only by
// watch events that zkCli printed one step later or earlier: its event
// thread can print an event after the main thread has printed the next
// prompt's output (a delete's NodeDeleted shown under the next command),
// which the shell, printing events before the reply they came before,
// never does. Steps i-1, i and i+1 together must then hold the same lines.
func eventMovedOneStep(gots [][]string, steps []step, i int) bool {
	hasEvent := func(ls []string) bool { return slices.Contains(ls, "WATCHER::") }
	lo, hi := max(i-1, 0), min(i+1, len(steps)-1)
	var got, want []string
	events := false
	for k := lo; k <= hi; k++ {
		events = events || hasEvent(gots[k]) || hasEvent(steps[k].want)
		got = append(got, gots[k]...)
		want = append(want, steps[k].want...)
	}
	return events && slices.Equal(nonEmptySorted(got), nonEmptySorted(want))
}

// sameOutput compares a step's output with zkCli's. ls -R lists each
// level in the server's order in zkCli, so the lines are compared as a
// set; for an unknown command zkCli lists its commands, of which the shell
// has a subset (no reconfig, config, connect, close, printwatches,
// version): each line of the shell's list must be in zkCli's.
//
// zkCli prints a watch event on its event thread while its main thread
// prints the command's own lines, so the two interleave differently from
// run to run (even inside the event's block): output with an event is
// compared as the set of its non-empty lines.
func sameOutput(line string, got, want []string) bool {
	if slices.Contains(got, "WATCHER::") || slices.Contains(want, "WATCHER::") {
		return slices.Equal(nonEmptySorted(got), nonEmptySorted(want))
	}
	switch {
	case strings.HasPrefix(line, "ls -R"):
		got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	case strings.HasPrefix(line, "bogus"):
		if len(got) < 2 || got[len(got)-1] != want[len(want)-1] {
			return false
		}
		for _, g := range got[1 : len(got)-1] {
			if !slices.Contains(want, g) {
				return false
			}
		}
		return true
	}
	return slices.Equal(got, want)
}

// nonEmptySorted is lines without the empty ones, sorted.
func nonEmptySorted(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l != "" {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// TestScriptsMatchZkCli runs zkCli scripts through the shell against a
// zkafka server and compares every command's output with what Apache
// ZooKeeper 3.8's zkCli.sh printed for it: compat-tests/zkcli's script
// (create, get, set, ls, stat, delete, ACLs, auth, containers, TTLs,
// deleteall) and testdata/more.txt (watches, persistent watches,
// removewatches, getEphemerals, getAllChildrenNumber, whoami, sync, usage
// errors).
func TestScriptsMatchZkCli(t *testing.T) {
	addr := startServer(t)
	for _, path := range []string{filepath.Join("..", "..", "..", "compat-tests", "zkcli", "expected.txt"), filepath.Join("testdata", "more.txt"), filepath.Join("testdata", "quota.txt")} {
		t.Run(filepath.Base(path), func(t *testing.T) { runScript(t, addr, loadScript(t, path)) })
	}
}
