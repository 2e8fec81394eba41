package raftnode

import (
	"context"
	"encoding/binary"
	"slices"
	"sync/atomic"

	"go.etcd.io/raft/v3/raftpb"
)

// The data of a normal entry proposed through Propose is framed so that
// the node that proposed it can hand Apply's result to the waiting caller:
//
//	+------------------+------------------+-------------------------+
//	| proposer id (8)  | proposal seq (8) | payload (given to Apply)|
//	+------------------+------------------+-------------------------+
//
// The seq counter starts at a random value, so ids stay unique across
// restarts. Entries with empty data are raft's own (a new leader's empty
// entry); they are not applied.
const frameSize = 16

func appendFrame(dst []byte, node, seq uint64, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, node)
	dst = binary.BigEndian.AppendUint64(dst, seq)
	return append(dst, payload...)
}

// putFrame writes the frame of node and seq into dst[:frameSize].
func putFrame(dst []byte, node, seq uint64) {
	binary.BigEndian.PutUint64(dst, node)
	binary.BigEndian.PutUint64(dst[8:], seq)
}

func decodeFrame(data []byte) (node, seq uint64, payload []byte, ok bool) {
	if len(data) < frameSize {
		return 0, 0, nil, false
	}
	return binary.BigEndian.Uint64(data), binary.BigEndian.Uint64(data[8:]), data[frameSize:], true
}

// proposal is a pending Propose or ProposeFunc call.
type proposal struct {
	seq  uint64
	data []byte               // the framed entry data
	cc   *raftpb.ConfChangeV2 // a conf change (ProposeConfChange), its Context = data
	ctx  context.Context
	done chan proposalResult // Propose: buffered 1
	cb   Done                // ProposeFunc, ProposeFramed
	// leaderOnly: proposed only by raft's leader of the moment, never
	// forwarded or parked (ProposeLeaderFunc).
	leaderOnly bool
	// settled makes finish deliver exactly one result (after the loop has
	// exited, queued proposals are failed by whichever goroutine drains
	// them).
	settled atomic.Bool

	// Owned by the loop.
	term  uint64 // the term when it was handed to raft
	tick  uint64 // the node's tick count when it was handed to raft
	index uint64 // where it was seen in the local log; 0 until then
}

type proposalResult struct {
	value any
	index uint64
	err   error
}

// finish delivers p's result, once; later calls do nothing.
func (p *proposal) finish(r proposalResult) {
	if !p.settled.CompareAndSwap(false, true) {
		return
	}
	if p.cb != nil {
		p.cb.ProposalDone(r.value, r.index, r.err)
		return
	}
	p.done <- r
}

// readRequest is a pending ReadIndex call.
type readRequest struct {
	ctx  context.Context
	done chan error // buffered 1

	// Owned by the loop.
	id    uint64 // the request context given to raft (changes on a retry)
	index uint64 // the read index once raft answered; 0 until then
}

// finish completes r (once; see proposal.finish).
func (r *readRequest) finish(err error) {
	select {
	case r.done <- err:
	default:
	}
}

// waiters tracks the pending Propose and ReadIndex calls; the loop owns it.
//
// A proposal is first parked (while no leader takes it), then handed to
// raft (props). When it appears in the local log at some index (in
// Ready.Entries, on the leader at once, on a follower when the leader
// replicates it) it is also listed under that index (atIndex), and its
// fate is settled when that index is applied: its own result, or
// ErrProposalDropped if another entry won the index. One that never
// appears fails with ErrOutcomeUnknown when the term changes.
type waiters struct {
	parked  []*proposal          // in arrival order
	props   map[uint64]*proposal // by seq
	atIndex map[uint64][]*proposal
	// spare holds emptied atIndex lists for seen to reuse, rather than
	// allocate one per entry this node proposed.
	spare   [][]*proposal
	ccCheck []*proposal // conf changes this leader handed to raft since the last Ready

	parkedReads []*readRequest
	reads       map[uint64]*readRequest // by id, awaiting raft's read index
	readsAt     []*readRequest          // awaiting the apply of their index
	nextReadID  uint64
}

func newWaiters() waiters {
	return waiters{props: map[uint64]*proposal{}, atIndex: map[uint64][]*proposal{}, reads: map[uint64]*readRequest{}}
}

// maxSpare bounds waiters.spare: about one Ready's worth of proposals.
const maxSpare = maxBatch

// seen records the proposals of node among ents at their indexes.
func (w *waiters) seen(node uint64, ents []*raftpb.Entry) {
	for _, e := range ents {
		from, seq, _, ok := decodeFrame(frameOf(e))
		if !ok || from != node {
			continue
		}
		p := w.props[seq]
		if p == nil || p.index == e.GetIndex() {
			continue
		}
		p.index = e.GetIndex()
		at := w.atIndex[p.index]
		if at == nil && len(w.spare) > 0 {
			at, w.spare = w.spare[len(w.spare)-1], w.spare[:len(w.spare)-1]
		}
		w.atIndex[p.index] = append(at, p)
	}
}

// applied settles the proposals seen at index, now that the entry there
// (whose frame is node/seq, ok=false for an unframed entry) is applied
// with result.
func (w *waiters) applied(index, node, seq uint64, ok bool, self uint64, result any) {
	at := w.atIndex[index]
	for _, p := range at {
		delete(w.props, p.seq)
		if ok && node == self && seq == p.seq {
			p.finish(proposalResult{value: result, index: index})
		} else {
			p.finish(proposalResult{err: ErrProposalDropped})
		}
	}
	delete(w.atIndex, index)
	if at != nil && len(w.spare) < maxSpare {
		clear(at)
		w.spare = append(w.spare, at[:0])
	}
	if ok && node == self {
		// Applied without having been seen (not expected; be safe).
		if p := w.props[seq]; p != nil {
			delete(w.props, seq)
			p.finish(proposalResult{value: result, index: index})
		}
	}
}

// termChanged fails the proposals handed to raft before term that never
// appeared in the local log: the leader they went to lost its term, and
// this node cannot tell whether they will be committed.
func (w *waiters) termChanged(term uint64) {
	for seq, p := range w.props {
		if p.index == 0 && p.term < term {
			delete(w.props, seq)
			p.finish(proposalResult{err: ErrOutcomeUnknown})
		}
	}
}

// forwardLost fails the proposals handed to raft before tick that never
// appeared in the local log: they were forwarded to a leader and the
// message or its answer was lost without the term changing.
func (w *waiters) forwardLost(tick uint64) {
	for seq, p := range w.props {
		if p.index == 0 && p.tick < tick {
			delete(w.props, seq)
			p.finish(proposalResult{err: ErrOutcomeUnknown})
		}
	}
}

// snapshotRestored fails the proposals a snapshot at index may cover.
func (w *waiters) snapshotRestored(index uint64) {
	for seq, p := range w.props {
		if p.index == 0 || p.index <= index {
			delete(w.props, seq)
			delete(w.atIndex, p.index)
			p.finish(proposalResult{err: ErrOutcomeUnknown})
		}
	}
}

// readAnswered records raft's read index for request id; it returns the
// request, or nil if it is no longer waited for.
func (w *waiters) readAnswered(id, index uint64) *readRequest {
	r := w.reads[id]
	if r == nil {
		return nil
	}
	delete(w.reads, id)
	r.index = index
	w.readsAt = append(w.readsAt, r)
	return r
}

// readsApplied completes the reads whose index is applied.
func (w *waiters) readsApplied(applied uint64) {
	w.readsAt = slices.DeleteFunc(w.readsAt, func(r *readRequest) bool {
		if r.index <= applied {
			r.finish(nil)
			return true
		}
		return false
	})
}

// sweep drops the proposals and reads whose caller has given up. A
// proposal already seen in the log stays until its index is applied.
func (w *waiters) sweep() {
	w.parked = slices.DeleteFunc(w.parked, func(p *proposal) bool { return p.ctx.Err() != nil })
	for seq, p := range w.props {
		if p.index == 0 && p.ctx.Err() != nil {
			delete(w.props, seq)
		}
	}
	w.parkedReads = slices.DeleteFunc(w.parkedReads, func(r *readRequest) bool { return r.ctx.Err() != nil })
	for id, r := range w.reads {
		if r.ctx.Err() != nil {
			delete(w.reads, id)
		}
	}
	w.readsAt = slices.DeleteFunc(w.readsAt, func(r *readRequest) bool { return r.ctx.Err() != nil })
}

// failAll fails every pending call with err.
func (w *waiters) failAll(err error) {
	for _, p := range w.parked {
		p.finish(proposalResult{err: err})
	}
	for _, p := range w.props {
		p.finish(proposalResult{err: err})
	}
	for _, r := range w.parkedReads {
		r.finish(err)
	}
	for _, r := range w.reads {
		r.finish(err)
	}
	for _, r := range w.readsAt {
		r.finish(err)
	}
	*w = newWaiters()
}
