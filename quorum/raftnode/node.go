package raftnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

var (
	// ErrStopped is returned by the methods of a Node that is stopped (or
	// stopping); a pending Propose may or may not have been applied.
	ErrStopped = errors.New("raftnode: node stopped")
	// ErrProposalDropped is returned by Propose when the entry was
	// definitely not applied: another entry was committed at the index
	// where this node had seen it. Retrying is safe.
	ErrProposalDropped = errors.New("raftnode: proposal dropped")
	// ErrOutcomeUnknown is returned by Propose when this node can no
	// longer tell whether the entry will be applied: the term changed
	// before the entry appeared in the local log (it was forwarded to a
	// leader that lost its leadership), or a snapshot from the leader
	// covered it. It is ZooKeeper's connection loss: the write may or may
	// not have happened.
	ErrOutcomeUnknown = errors.New("raftnode: proposal outcome unknown (leadership changed)")
	// ErrNotLeader is the outcome of a ProposeLeaderFunc on a node that
	// was not the leader when raft took it: the entry was not proposed.
	ErrNotLeader = errors.New("raftnode: not the leader")
)

// maxMsgBytes is raft's MaxSizePerMsg: the entries of one MsgApp, a single
// larger entry excepted (quorum's raftMaxMsgBytes is the same value).
const maxMsgBytes = 1 << 20

// Node is one member of a raft group: it owns the raft.RawNode, the durable
// log and snapshots, and applies committed entries to a StateMachine. Its
// methods are safe for concurrent use.
type Node struct {
	cfg    Config
	id     uint64
	sm     StateMachine
	logger *slog.Logger

	// Inputs of the loop goroutine.
	propc   chan *proposal
	readc   chan *readRequest
	recvc   chan *raftpb.Message
	statusc chan chan Status
	reportc chan report     // from the Transport: unreachable peers, snapshot outcomes
	snapc   chan snapResult // background snapshot results; buffered 1
	stopc   chan struct{}   // closed by Stop
	done    chan struct{}   // closed when the loop has exited

	stopOnce sync.Once
	err      error  // why the loop exited; written before done is closed
	final    Status // the status when the loop exited; written before done is closed

	// recent is the status as of the last tick, for RecentStatus; nil
	// before the first tick.
	recent atomic.Pointer[Status]

	applied atomic.Uint64 // the last applied index
	seq     atomic.Uint64 // proposal ids; starts at a random value

	bg sync.WaitGroup // the background snapshot writer

	// Owned by the loop goroutine (and by Start before the loop runs).
	rn       *raft.RawNode
	st       *storage
	w        waiters
	batch    []*proposal // proposeQueued's scratch list
	term     uint64      // raft's term as of the last Ready
	lead     uint64      // the leader as of the last Ready (0: none known)
	role     raft.StateType
	reported struct {
		lead uint64
		role Role
	} // what OnStateChange was last told
	handOverUntil uint64            // while ticks < it, a new leader looks for a higher-id voter to hand over to
	handOverTo    map[uint64]bool   // the voters above this one that took part in its election
	heard         map[uint64]uint64 // the tick each peer was last heard from
	earlyUntil    uint64            // while ticks < it, a campaign on a dead leader's loss is retried (election.go)
	earlyRetry    *time.Ticker      // the retries of that campaign; nil when none is under way
	forgotUntil   uint64            // while ticks < it, this follower forgot a dead leader and may back its campaigner up
	confState     *raftpb.ConfState // the membership as of the last applied entry
	lastSnap      uint64            // index of the newest snapshot taken or received
	snapping      bool              // a snapshot is being written in the background
	ticks         uint64
	// sendNow and sendLater are sendReplication's scratch, kept between
	// Readys (a Transport does not keep the slices it is given).
	sendNow, sendLater []*raftpb.Message
}

// Start opens (or creates) the node's storage in cfg.Dir, restores sm from
// the newest valid snapshot, replays the committed log tail into it and
// starts the loop goroutine. On a first start the membership is
// cfg.Peers. Start returns once the entries known to be committed at the
// last stop are applied.
func Start(cfg Config, sm StateMachine) (*Node, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	st, rec, err := openStorage(&cfg)
	if err != nil {
		return nil, err
	}
	n := &Node{
		cfg: cfg, id: cfg.ID, sm: sm, logger: cfg.Logger.With("raft", cfg.ID),
		propc: make(chan *proposal, 1024), readc: make(chan *readRequest, 256),
		recvc: make(chan *raftpb.Message, 1024), statusc: make(chan chan Status), reportc: make(chan report, 1024),
		snapc: make(chan snapResult, 1), stopc: make(chan struct{}), done: make(chan struct{}),
		st: st, w: newWaiters(),
	}
	n.seq.Store(rand.Uint64() >> 1) // ids stay unique across restarts
	if err := n.init(rec); err != nil {
		n.bg.Wait()
		st.log.Close()
		return nil, err
	}
	go n.run()
	return n, nil
}

// init restores the state machine, creates the RawNode and replays the
// committed tail of the log (on the caller's goroutine: the loop does not
// run yet).
func (n *Node) init(rec *recovered) error {
	if rec.snap != nil {
		if err := n.restoreFile(rec.snap); err != nil {
			return err
		}
	}
	_, cs, _ := n.st.InitialState()
	n.setConfState(cs)
	n.applied.Store(rec.applied)
	n.lastSnap = rec.applied
	n.term = rec.hard.GetTerm()
	rn, err := raft.NewRawNode(&raft.Config{
		ID: n.id, ElectionTick: n.cfg.ElectionTicks, HeartbeatTick: n.cfg.HeartbeatTicks,
		Storage: n.st, Applied: rec.applied,
		MaxSizePerMsg: maxMsgBytes, MaxInflightMsgs: 256, MaxUncommittedEntriesSize: 64 << 20,
		CheckQuorum: true, PreVote: true, ReadOnlyOption: raft.ReadOnlySafe,
		Logger: raftLogger{n.logger},
	})
	if err != nil {
		return err
	}
	n.rn = rn
	single := len(cs.GetVoters()) == 1 && cs.GetVoters()[0] == n.id
	if single {
		// A single voter need not wait an election timeout: it is the
		// leader (and has committed its empty entry) when Start returns.
		if err := rn.Campaign(); err != nil {
			return err
		}
	}
	for (single || n.applied.Load() < rec.hard.GetCommit()) && rn.HasReady() {
		if err := n.handleReady(); err != nil {
			return err
		}
	}
	n.logger.Debug("raftnode: started", "applied", n.applied.Load(), "first", rec.first, "term", n.term)
	return nil
}

// restoreFile replaces the state machine with the snapshot file described
// by info.
func (n *Node) restoreFile(info *snapInfo) error {
	f, info, err := openSnapshot(filepath.Join(n.cfg.Dir, snapName(info.meta.GetIndex())))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := n.sm.Restore(io.NewSectionReader(f, info.dataOff, info.dataLen)); err != nil {
		return fmt.Errorf("raftnode: restore snapshot %d: %w", info.meta.GetIndex(), err)
	}
	return nil
}

func (n *Node) setConfState(cs *raftpb.ConfState) {
	n.confState = proto.Clone(raftpb.EnsureConfState(cs)).(*raftpb.ConfState)
}

// Propose replicates data as a new log entry and waits until it is
// committed and applied on this node; it returns what StateMachine.Apply
// returned for it and its index. It works on any member: a follower or
// learner forwards the entry to the leader. While no leader is known the
// proposal waits (in order with the others) for one.
//
// Errors: ErrStopped; ctx's error; ErrProposalDropped (not applied);
// ErrOutcomeUnknown (may or may not be applied). After ctx's error or
// ErrStopped the entry may still be applied.
func (n *Node) Propose(ctx context.Context, data []byte) (result any, index uint64, err error) {
	p := &proposal{seq: n.seq.Add(1), ctx: ctx, done: make(chan proposalResult, 1)}
	p.data = appendFrame(make([]byte, 0, frameSize+len(data)), n.id, p.seq, data)
	return n.await(ctx, p)
}

// await queues p and waits for its outcome (Propose, ProposeConfChange).
func (n *Node) await(ctx context.Context, p *proposal) (result any, index uint64, err error) {
	select {
	case n.propc <- p:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	case <-n.done:
		return nil, 0, ErrStopped
	}
	select {
	case r := <-p.done:
		return r.value, r.index, r.err
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	case <-n.done:
		select {
		case r := <-p.done:
			return r.value, r.index, r.err
		default:
			return nil, 0, ErrStopped
		}
	}
}

// ProposeFunc is Propose without waiting and without a deadline: it
// queues data behind the proposals queued before it (so one goroutine's
// proposals reach raft in the order it made them) and returns; done is
// called exactly once with the outcome, as Propose would return it. done
// runs on the Node's loop goroutine (or, for ErrStopped, on the caller's
// or another one): it must be quick and must not call the Node's methods.
// ProposeFunc blocks only while the Node's input queue is full.
func (n *Node) ProposeFunc(data []byte, done func(result any, index uint64, err error)) {
	n.proposeFunc(withFrameRoom(data), false, DoneFunc(done))
}

// ProposeFramed is ProposeFunc for a payload that follows FrameSize bytes
// reserved at the start of buf, which the Node fills in with the entry's
// frame instead of copying the payload into a new buffer. buf belongs to
// the Node from then on. done is a Done rather than a func so that a
// caller can pass one without allocating a closure per proposal.
func (n *Node) ProposeFramed(buf []byte, done Done) {
	if len(buf) < FrameSize {
		panic("raftnode: ProposeFramed buffer shorter than FrameSize")
	}
	n.proposeFunc(buf, false, done)
}

// FrameSize is the room ProposeFramed's buffer reserves for the frame.
const FrameSize = frameSize

// Done receives the outcome of a ProposeFramed proposal, as the func given
// to ProposeFunc does.
type Done interface {
	ProposalDone(result any, index uint64, err error)
}

// DoneFunc is a func as a Done.
type DoneFunc func(result any, index uint64, err error)

// ProposalDone implements Done.
func (f DoneFunc) ProposalDone(result any, index uint64, err error) { f(result, index, err) }

// ProposeLeaderFunc is ProposeFunc for a decision that only the leader of
// the moment may take (ZooKeeper's session expiry): the entry is appended
// only if this node is raft's leader, and no transfer is under way, when
// the loop takes it; otherwise done gets ErrNotLeader at once. It is never
// forwarded, nor held for a leader to come: a leader that was deposed while
// it decided (it was stopped, cut off) must not have a new leader commit
// its stale decision. An entry it appended as the leader of a term is
// committed only by raft's rules (a majority of that term's log).
func (n *Node) ProposeLeaderFunc(data []byte, done func(result any, index uint64, err error)) {
	n.proposeFunc(withFrameRoom(data), true, DoneFunc(done))
}

// withFrameRoom returns data behind FrameSize reserved bytes, in a new buffer.
func withFrameRoom(data []byte) []byte {
	return append(make([]byte, FrameSize, FrameSize+len(data)), data...)
}

// proposeFunc queues the proposal of buf, whose first FrameSize bytes it
// fills in with this node's frame.
func (n *Node) proposeFunc(buf []byte, leaderOnly bool, done Done) {
	p := &proposal{seq: n.seq.Add(1), ctx: context.Background(), cb: done, leaderOnly: leaderOnly}
	putFrame(buf, n.id, p.seq)
	p.data = buf
	select {
	case n.propc <- p:
		select {
		case <-n.done:
			n.failQueued() // the loop may have exited without taking p
		default:
		}
	case <-n.done:
		p.finish(proposalResult{err: ErrStopped})
	}
}

// failQueued fails the proposals left in the input queue after the loop
// has exited. Whoever queues a proposal and then finds the loop gone calls
// it too, so none is stranded.
func (n *Node) failQueued() {
	for {
		select {
		case p := <-n.propc:
			p.finish(proposalResult{err: ErrStopped})
		default:
			return
		}
	}
}

// ReadIndex is a linearizable barrier: it returns once this node has
// applied every entry that was committed (on the leader) when ReadIndex
// was called. Reads of the local state after it see every write that
// completed before the call anywhere in the cluster (ZooKeeper's sync).
// Errors: ErrStopped, ctx's error.
func (n *Node) ReadIndex(ctx context.Context) error {
	r := &readRequest{ctx: ctx, done: make(chan error, 1)}
	select {
	case n.readc <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		return ErrStopped
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		select {
		case err := <-r.done:
			return err
		default:
			return ErrStopped
		}
	}
}

// Step hands a message from another node (delivered by the Transport) to
// raft. A MsgSnap whose snapshot bytes do not check out is rejected.
func (n *Node) Step(ctx context.Context, m *raftpb.Message) error {
	if m.GetType() == raftpb.MsgSnap {
		data := m.GetSnapshot().GetData()
		info, err := checkSnapshot(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return err
		}
		if info.meta.GetIndex() != m.GetSnapshot().GetMetadata().GetIndex() {
			return fmt.Errorf("%w: index %d in a MsgSnap for %d", errBadSnapshot, info.meta.GetIndex(), m.GetSnapshot().GetMetadata().GetIndex())
		}
	}
	select {
	case n.recvc <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		return ErrStopped
	}
}

// report is a Transport's feedback about one peer.
type report struct {
	id       uint64
	snapshot bool // a MsgSnap outcome (else: the peer is unreachable)
	failed   bool
	// gone: the peer's process is gone (PeerGone); connected are the
	// peers the Transport is still connected to.
	gone      bool
	connected []uint64
}

// ReportUnreachable tells raft that a message to peer id could not be
// delivered, so the leader probes it rather than streaming to it. It never
// blocks (a report is dropped when the queue is full).
func (n *Node) ReportUnreachable(id uint64) {
	select {
	case n.reportc <- report{id: id}:
	default:
	}
}

// ReportSnapshot tells raft whether a MsgSnap to peer id was delivered
// (see Config.TransportReportsSnapshots).
func (n *Node) ReportSnapshot(id uint64, delivered bool) {
	select {
	case n.reportc <- report{id: id, snapshot: true, failed: !delivered}:
	case <-n.done:
	}
}

// AppliedIndex returns the index of the last entry applied to the state
// machine.
func (n *Node) AppliedIndex() uint64 { return n.applied.Load() }

// Status returns the node's view of the group. After Stop it returns the
// status at the time the node stopped.
func (n *Node) Status() Status {
	c := make(chan Status, 1)
	select {
	case n.statusc <- c:
		return <-c
	case <-n.done:
		return n.final
	}
}

// RecentStatus returns the node's status as of its last tick (at most a
// TickInterval old while the loop runs, the final status after Stop)
// without waiting for the loop. Status waits until the loop is free, and
// the loop may be inside an fsync that takes seconds on a loaded disk:
// monitoring (ZooKeeper's mntr) must answer regardless.
func (n *Node) RecentStatus() Status {
	select {
	case <-n.done:
		return n.final
	default:
	}
	if s := n.recent.Load(); s != nil {
		return *s
	}
	return Status{ID: n.id}
}

// Stop stops the loop, waits for a snapshot being written, fails pending
// proposals and reads with ErrStopped, records the applied index and
// closes the files. It returns the error that stopped the node, if any.
// It is safe to call more than once.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() { close(n.stopc) })
	<-n.done
	return n.err
}

// Done returns a channel that is closed when the node has stopped (by
// Stop or because of a storage error, which Stop then returns).
func (n *Node) Done() <-chan struct{} { return n.done }

// Err returns, once Done is closed, the error that stopped the node: nil
// after a clean Stop, the storage or state-machine error that ended the
// loop otherwise (the node is then dead: its log may not hold what raft
// believes durable, so it must not be restarted in the same process).
// Before Done is closed it returns nil.
func (n *Node) Err() error {
	select {
	case <-n.done:
		return n.err
	default:
		return nil
	}
}

// shutdown runs when the loop exits, on the loop goroutine.
func (n *Node) shutdown(err error) {
	n.bg.Wait()
	n.final = n.status()
	if err == nil {
		err = ErrStopped
	} else {
		n.logger.Error("raftnode: stopping after an error", "err", err)
	}
	n.w.failAll(err)
	cerr := n.st.close(n.applied.Load())
	if err == ErrStopped {
		err = cerr
	}
	n.err = err
	close(n.done)
	n.failQueued()
}

// isLearner reports whether this node is a learner in the current
// configuration.
func (n *Node) isLearner() bool { return slices.Contains(n.confState.GetLearners(), n.id) }
