package quorum

import (
	"context"
	"errors"
	"sync"

	"github.com/zkafka/zkafka/quorum/raftnode"
)

// fakeLog is a scripted stand-in for the raft log shared by one or more
// Servers (the members of an ensemble). Every entry is applied, in log
// order, through each member's own state machine (Server.Apply), as the
// raft loop of each member would; the proposer gets its own server's
// result. A test can hold proposals (they queue, in order, until commit),
// fail the oldest one with raft's "outcome unknown" (applied or not) or
// "dropped", and make ReadIndex fail.
//
// Entries are applied on the goroutine that made them committable (the
// proposer's when nothing is held, the test's on commit): the pipeline
// must not care which goroutine runs Apply, only that it runs in order.
type fakeLog struct {
	mu struct {
		sync.Mutex
		members []*Server
		index   uint64 // the last applied entry: the zxid (= raft index)
		hold    bool
		pending []*fakeEntry // proposed, neither applied nor failed; log order
		readErr error        // what ReadIndex returns
	}
}

// fakeEntry is one proposal waiting for its outcome.
type fakeEntry struct {
	from *Server
	data []byte
	out  chan proposeResult
}

// fakeMember is a member's replicator: its proposals go into the shared log.
type fakeMember struct {
	log     *fakeLog
	srv     *Server
	stopped bool // l.mu must be held
}

// join makes s a member of the log and its replicator.
func (l *fakeLog) join(s *Server) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.members = append(l.mu.members, s)
	s.repl = &fakeMember{log: l, srv: s}
}

// ProposeAsync implements replicator: applied at once unless the log is
// held or earlier proposals are still pending (log order).
func (m *fakeMember) ProposeAsync(data []byte) <-chan proposeResult {
	l := m.log
	out := make(chan proposeResult, 1)
	e := &fakeEntry{from: m.srv, data: data, out: out}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case m.stopped:
		out <- proposeResult{err: raftnode.ErrStopped}
	case l.mu.hold || len(l.mu.pending) > 0:
		l.mu.pending = append(l.mu.pending, e)
	default:
		l.applyLocked(e, true)
	}
	return out
}

// ReadIndex implements replicator: every entry is applied as soon as it is
// committed, so there is nothing to wait for unless the test set an error.
func (m *fakeMember) ReadIndex(ctx context.Context) error {
	m.log.mu.Lock()
	defer m.log.mu.Unlock()
	if m.stopped {
		return raftnode.ErrStopped
	}
	return m.log.mu.readErr
}

// Stop implements replicator: pending proposals of this member fail, as
// raftnode fails them when it stops.
func (m *fakeMember) Stop() error {
	l := m.log
	l.mu.Lock()
	defer l.mu.Unlock()
	m.stopped = true
	kept := l.mu.pending[:0]
	for _, e := range l.mu.pending {
		if e.from == m.srv {
			e.out <- proposeResult{err: raftnode.ErrStopped}
			continue
		}
		kept = append(kept, e)
	}
	l.mu.pending = kept
	return nil
}

// applyLocked gives e the next index and applies it on every member;
// report sends the proposer its own server's result. l.mu must be held.
func (l *fakeLog) applyLocked(e *fakeEntry, report bool) {
	l.mu.index++
	var mine *appliedTxn
	for _, s := range l.mu.members {
		a, _ := s.apply(l.mu.index, e.data).(*appliedTxn)
		if s == e.from {
			mine = a
		}
	}
	if report {
		e.out <- proposeResult{applied: mine}
	}
}

// setHold holds (or stops holding) new proposals.
func (l *fakeLog) setHold(hold bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.hold = hold
}

// pendingCount is the number of proposals waiting for their outcome.
func (l *fakeLog) pendingCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.mu.pending)
}

// commit applies the n oldest pending proposals, in order.
func (l *fakeLog) commit(n int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > len(l.mu.pending) {
		return errors.New("fewer proposals pending than asked to commit")
	}
	for _, e := range l.mu.pending[:n] {
		l.applyLocked(e, true)
	}
	l.mu.pending = l.mu.pending[n:]
	return nil
}

// fail ends the oldest pending proposal with err. With applied, the entry
// is in the log all the same (what "outcome unknown" allows: the leader
// that took it committed it before it lost its leadership).
func (l *fakeLog) fail(err error, applied bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.mu.pending) == 0 {
		return errors.New("no proposal pending")
	}
	e := l.mu.pending[0]
	l.mu.pending = l.mu.pending[1:]
	if applied {
		l.applyLocked(e, false)
	}
	e.out <- proposeResult{err: err}
	return nil
}

// setReadIndexErr makes ReadIndex fail with err (nil: succeed).
func (l *fakeLog) setReadIndexErr(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.readErr = err
}

// lastIndex is the index of the last applied entry.
func (l *fakeLog) lastIndex() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.index
}
