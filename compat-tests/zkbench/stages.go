package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

// writeStages are the steps of one write of a single session, in the
// order a write passes them, as the execution trace of the server shows
// them (the goroutines are told apart by their stacks): the connection's
// reader readied by the poller, the raft loop readied by the proposal, its
// fdatasync, the connection's writer readied by the outcome, the reply's
// socket write. Each is timed from the end of the one before.
var writeStages = []string{
	"reader readied → running",
	"reader decodes, proposes",
	"raft loop readied → running",
	"raft loop: Ready, append",
	"fdatasync",
	"raft loop: commit, apply",
	"writer readied → running",
	"writer encodes the reply",
	"reply write(2)",
}

// stageRole is a server goroutine of the write path.
type stageRole uint8

const (
	roleNone stageRole = iota
	roleReader
	roleLoop
	roleWriter
)

// stageTimer follows the trace's goroutine transitions and timestamps each
// write's stages; a write whose stages come out of order (a ping, a
// second request) is dropped.
type stageTimer struct {
	role  map[trace.GoID]stageRole
	cur   []trace.Time // the write being followed: the start, then each stage's end
	done  [][]trace.Time
	turns []float64 // µs from a reply's write to the next request's reader wake-up
}

// mark records the end of stage i (1-based) if the write is at stage i-1.
func (s *stageTimer) mark(i int, t trace.Time) {
	if len(s.cur) == i {
		s.cur = append(s.cur, t)
	}
}

func (s *stageTimer) event(ev trace.Event) {
	if ev.Kind() != trace.EventStateTransition {
		return
	}
	st := ev.StateTransition()
	if st.Resource.Kind != trace.ResourceGoroutine {
		return
	}
	id := st.Resource.Goroutine()
	from, to := st.Goroutine()
	t := ev.Time()
	if from == trace.GoRunning && (to == trace.GoWaiting || to == trace.GoSyscall) {
		s.learnRole(id, ev.Stack())
		switch {
		case s.role[id] == roleLoop && to == trace.GoSyscall && stackHas(ev.Stack(), "datasync"):
			s.mark(4, t)
		case s.role[id] == roleWriter && to == trace.GoSyscall && stackHas(ev.Stack(), "Write"):
			s.mark(8, t)
		}
	}
	switch s.role[id] {
	case roleReader:
		if from == trace.GoWaiting && to == trace.GoRunnable {
			s.nextWrite(t)
		} else if from == trace.GoRunnable && to == trace.GoRunning {
			s.mark(1, t)
		}
	case roleLoop:
		switch {
		case from == trace.GoWaiting && to == trace.GoRunnable:
			s.mark(2, t)
		case from == trace.GoRunnable && to == trace.GoRunning:
			s.mark(3, t)
		case from == trace.GoSyscall:
			s.mark(5, t)
		}
	case roleWriter:
		switch {
		case from == trace.GoWaiting && to == trace.GoRunnable:
			s.mark(6, t)
		case from == trace.GoRunnable && to == trace.GoRunning:
			s.mark(7, t)
		case from == trace.GoSyscall:
			s.mark(9, t)
		}
	}
}

// nextWrite starts following a write at t, keeping the last one if it
// passed every stage.
func (s *stageTimer) nextWrite(t trace.Time) {
	if len(s.cur) == len(writeStages)+1 {
		s.done = append(s.done, s.cur)
		s.turns = append(s.turns, float64(t-s.cur[len(s.cur)-1])/1e3)
	}
	s.cur = []trace.Time{t}
}

func (s *stageTimer) learnRole(id trace.GoID, stack trace.Stack) {
	switch {
	case stackHas(stack, "raftnode.(*Node).run"):
		s.role[id] = roleLoop
	case stackHas(stack, "(*conn).writeLoop"):
		s.role[id] = roleWriter
	case stackHas(stack, "(*conn).readLoop"):
		s.role[id] = roleReader
	}
}

func stackHas(stack trace.Stack, sub string) bool {
	for f := range stack.Frames() {
		if strings.Contains(f.Func, sub) {
			return true
		}
	}
	return false
}

// printWriteStages reads an execution trace of the server under a
// one-session write load and prints each stage's p50 and p90, and the
// client's turnaround (reply written → next request's wake-up: the
// loopback and the load generator).
func printWriteStages(path string, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return err
	}
	s := &stageTimer{role: map[trace.GoID]stageRole{}}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		s.event(ev)
	}
	if len(s.done) == 0 {
		return fmt.Errorf("no write of a single session found in %s", path)
	}
	fmt.Fprintf(w, "\nstages of a write, one session, from the server's execution trace (%d writes): p50 / p90 µs\n", len(s.done))
	sum := 0.0
	for i, name := range writeStages {
		d := make([]float64, len(s.done))
		for j, ts := range s.done {
			d[j] = float64(ts[i+1]-ts[i]) / 1e3
		}
		p50, p90 := percentiles(d)
		sum += p50
		fmt.Fprintf(w, "  %-30s %7.1f %7.1f\n", name, p50, p90)
	}
	p50, p90 := percentiles(s.turns)
	fmt.Fprintf(w, "  %-30s %7.1f %7.1f\n", "client turnaround", p50, p90)
	fmt.Fprintf(w, "  %-30s %7.1f\n", "sum of the p50s", sum+p50)
	return nil
}

func percentiles(d []float64) (p50, p90 float64) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return d[len(d)/2], d[len(d)*9/10]
}
