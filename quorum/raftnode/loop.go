package raftnode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// maxDrain bounds the inputs taken between two Readys, so that a flood of
// proposals still gets persisted and answered in batches.
const maxDrain = 4096

// run is the loop goroutine: the only one that touches the RawNode, the
// storage and the state machine (see the package doc).
func (n *Node) run() {
	ticker := time.NewTicker(n.cfg.TickInterval)
	defer ticker.Stop()
	var err error
	for err == nil {
		if n.rn.HasReady() {
			err = n.handleReady()
		} else if !n.input(ticker.C) {
			break
		}
		// Take whatever else is already queued, so that the next Ready
		// (and its single fsync) covers all of it: group commit.
		for i := 0; i < maxDrain && n.queued(ticker.C); i++ {
			if !n.input(ticker.C) {
				break
			}
		}
		select {
		case <-n.stopc:
			n.shutdown(err)
			return
		default:
		}
	}
	n.shutdown(err)
}

// queued reports whether an input is waiting (Status requests, on an
// unbuffered channel, wait for the next time the loop blocks).
func (n *Node) queued(tick <-chan time.Time) bool {
	return len(n.propc)+len(n.readc)+len(n.recvc)+len(n.snapc)+len(n.reportc)+len(tick) > 0
}

// input waits for one input of the loop and handles it. It returns false
// if the node is stopping.
func (n *Node) input(tick <-chan time.Time) bool {
	select {
	case <-tick:
		n.tick()
	case <-n.earlyRetryC():
		n.retryEarlyCampaign() // election.go
	case p := <-n.propc:
		n.proposeQueued(p)
	case r := <-n.readc:
		n.read(r)
	case m := <-n.recvc:
		n.step(m)
	case c := <-n.statusc:
		c <- n.status()
	case res := <-n.snapc:
		n.snapshotDone(res)
	case r := <-n.reportc:
		switch {
		case r.gone:
			n.peerGone(r.id, r.connected) // election.go
		case !r.snapshot:
			n.rn.ReportUnreachable(r.id)
		case r.failed:
			n.rn.ReportSnapshot(r.id, raft.SnapshotFailure)
		default:
			n.rn.ReportSnapshot(r.id, raft.SnapshotFinish)
		}
	case <-n.stopc:
		return false
	}
	return true
}

func (n *Node) tick() {
	// The status for RecentStatus is taken before the tick, which may
	// start a CheckQuorum round, when the answers of the last one are in.
	st := n.status()
	n.recent.Store(&st)
	n.rn.Tick()
	n.ticks++
	n.retryParked()
	if n.ticks%uint64(n.cfg.ElectionTicks) == 0 {
		n.w.sweep()
		n.reissueReads() // answers lost with a message or a leader
		if n.ticks > uint64(n.cfg.ForwardTimeoutTicks) {
			n.w.forwardLost(n.ticks - uint64(n.cfg.ForwardTimeoutTicks))
		}
	}
	n.maybeHandOver()
}

// maybeHandOver is ZooKeeper's election outcome on raft: right after its
// election a leader transfers leadership, once, to the voter with the
// highest id above its own, as soon as that voter's log matches its own
// (not to a lower one that acknowledged first: the new leader, hearing no
// other follower, would not hand over again); servers that join later do
// not take over.
func (n *Node) maybeHandOver() {
	if n.handOverUntil == 0 {
		return
	}
	if n.role != raft.StateLeader || n.ticks >= n.handOverUntil {
		n.handOverUntil = 0
		return
	}
	st := n.rn.Status()
	last := st.Progress[n.id].Match
	var best uint64
	for id, pr := range st.Progress {
		if n.handOverTo[id] && id > best && !pr.IsLearner {
			best = id
		}
	}
	if best != 0 && st.Progress[best].Match == last {
		n.handOverUntil = 0
		n.logger.Info("raftnode: handing leadership over to a higher id", "to", best, "term", n.term)
		n.rn.TransferLeader(best)
	}
}

func (n *Node) step(m *raftpb.Message) {
	if n.heard == nil {
		n.heard = map[uint64]uint64{}
	}
	n.heard[m.GetFrom()] = n.ticks
	if err := n.rn.Step(m); err != nil {
		n.logger.Debug("raftnode: step", "type", m.GetType().String(), "from", m.GetFrom(), "err", err)
	}
	n.backUp(m) // election.go
}

// propose hands p to raft, or parks it behind earlier parked ones (a
// leader-only one is never parked: it is proposed or fails at once).
func (n *Node) propose(p *proposal) {
	if p.leaderOnly {
		// raft's state of the moment, not the last Ready's: a heartbeat
		// of a newer term stepped in this batch has deposed this leader.
		switch st := n.rn.BasicStatus(); {
		case st.RaftState != raft.StateLeader || st.LeadTransferee != raft.None:
			p.finish(proposalResult{err: ErrNotLeader})
		case !n.handOver(p):
			p.finish(proposalResult{err: ErrProposalDropped}) // too much uncommitted data
		}
		return
	}
	if len(n.w.parked) > 0 || !n.handOver(p) {
		n.w.parked = append(n.w.parked, p)
	}
}

// Bounds of a batch of proposals handed to raft in one MsgProp
// (proposeQueued). A follower forwards the batch to the leader as one
// message, so its entries stay well under MaxSizePerMsg (the peers' frame
// limit is derived from it), a single larger proposal excepted as in a
// MsgApp.
const (
	maxBatch      = 256
	maxBatchBytes = maxMsgBytes / 2
)

// proposeQueued proposes p and the normal proposals queued behind it in
// one MsgProp rather than one raft.Step each: raft allocates the message,
// the cloned entry list and the leader's self-acknowledgement per message,
// which under load is a large part of the CPU per write. raft takes or
// drops a MsgProp whole; a dropped batch is proposed again one by one, so
// that the outcome is what proposing them one by one would have been.
func (n *Node) proposeQueued(p *proposal) {
	for p != nil {
		if !batchable(p) {
			n.propose(p)
			return
		}
		var batch []*proposal
		batch, p = n.takeBatch(p)
		n.handOverBatch(batch)
		clear(batch)
		n.batch = batch[:0]
	}
}

// takeBatch returns p and the batchable proposals queued right behind it,
// within the bounds, and the next proposal it took from the queue that did
// not fit (nil if none).
func (n *Node) takeBatch(p *proposal) (batch []*proposal, next *proposal) {
	batch = append(n.batch[:0], p)
	size := len(p.data)
	for len(batch) < maxBatch {
		select {
		case q := <-n.propc:
			if !batchable(q) || size+len(q.data) > maxBatchBytes {
				return batch, q
			}
			batch = append(batch, q)
			size += len(q.data)
		default:
			return batch, nil
		}
	}
	return batch, nil
}

// batchable reports whether p may share a MsgProp with others: a normal
// proposal (not a conf change, not leader-only, which fails rather than
// waits when raft does not take it).
func batchable(p *proposal) bool { return p.cc == nil && !p.leaderOnly }

// handOverBatch proposes batch, in order, as propose would one by one.
func (n *Node) handOverBatch(batch []*proposal) {
	if len(batch) == 1 || len(n.w.parked) > 0 {
		for _, p := range batch {
			n.propose(p)
		}
		return
	}
	ents := make([]*raftpb.Entry, len(batch))
	for i, p := range batch {
		ents[i] = &raftpb.Entry{Data: p.data}
	}
	err := n.rn.Step(&raftpb.Message{Type: raftpb.MsgProp.Enum(), From: new(n.id), Entries: ents})
	for _, p := range batch {
		switch {
		case errors.Is(err, raft.ErrProposalDropped):
			n.propose(p)
		case err != nil:
			p.finish(proposalResult{err: err})
		default:
			n.handedOver(p)
		}
	}
}

// handOver proposes p to raft; false if raft dropped it (no leader known,
// a leadership transfer, too much uncommitted data), so it can be retried.
func (n *Node) handOver(p *proposal) bool {
	var err error
	if p.cc != nil {
		err = n.proposeConfChange(p)
	} else {
		err = n.rn.Propose(p.data)
	}
	switch {
	case errors.Is(err, raft.ErrProposalDropped):
		return false
	case err != nil:
		p.finish(proposalResult{err: err})
	default:
		n.handedOver(p)
	}
	return true
}

// handedOver records p as taken by raft.
func (n *Node) handedOver(p *proposal) {
	p.term = n.term
	p.tick = n.ticks
	n.w.props[p.seq] = p
}

// retryParked hands the parked proposals to raft, in order, until raft
// drops one; and issues the parked reads if a leader is known.
func (n *Node) retryParked() {
	i := 0
	for ; i < len(n.w.parked); i++ {
		p := n.w.parked[i]
		if p.ctx.Err() == nil && !n.handOver(p) {
			break
		}
	}
	n.w.parked = n.w.parked[i:]
	if n.lead != 0 {
		reads := n.w.parkedReads
		n.w.parkedReads = nil
		for _, r := range reads {
			n.read(r)
		}
	}
}

// read issues a ReadIndex request to raft, or parks it while no leader is
// known (a follower without a leader drops it silently).
func (n *Node) read(r *readRequest) {
	if n.lead == 0 {
		n.w.parkedReads = append(n.w.parkedReads, r)
		return
	}
	n.w.nextReadID++
	r.id = n.w.nextReadID
	n.w.reads[r.id] = r
	n.rn.ReadIndex(binary.BigEndian.AppendUint64(nil, r.id))
}

// reissueReads asks again for the reads raft has not answered (the request
// or its answer was lost, or went to a leader that lost its term).
func (n *Node) reissueReads() {
	reads := n.w.reads
	n.w.reads = make(map[uint64]*readRequest, len(reads))
	for _, r := range reads {
		n.read(r)
	}
}

// handleReady handles one Ready: apply what is already durable, a leader's
// appends sent, persist (one fsync), the other messages sent, apply the
// rest, Advance.
func (n *Node) handleReady() error {
	rd := n.rn.Ready()
	n.w.seen(n.id, rd.Entries)
	n.confChecked()
	// Committed entries that an earlier Ready made durable are applied
	// before this Ready's fsync: their proposers can then queue their next
	// proposals while the fsync runs, and the next Ready takes them all
	// (group commit). Entries are still applied only once durable.
	early := n.durablePrefix(&rd)
	if err := n.apply(early); err != nil {
		return err
	}
	later := rd.Messages
	if n.maySendBeforeSave(&rd) {
		later = n.sendReplication(rd.Messages)
	}
	if err := n.st.save(&rd); err != nil {
		return err
	}
	leaderChanged := n.noteState(&rd)
	n.send(later)
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := n.restoreReceived(rd.Snapshot); err != nil {
			return err
		}
	}
	if err := n.apply(rd.CommittedEntries[len(early):]); err != nil {
		return err
	}
	for _, rs := range rd.ReadStates {
		if len(rs.RequestCtx) == 8 {
			n.w.readAnswered(binary.BigEndian.Uint64(rs.RequestCtx), rs.Index)
		}
	}
	n.w.readsApplied(n.applied.Load())
	n.rn.Advance(rd)
	n.reportSnapshots(rd.Messages)
	if leaderChanged {
		n.retryParked()
		n.reissueReads()
	}
	n.maybeHandOver()
	n.maybeSnapshot()
	return n.st.trimMemory(n.applied.Load())
}

// maySendBeforeSave reports whether a leader may send this Ready's
// replication messages before its own write and fsync (the raft thesis,
// 10.2.1; etcd raft's README, step 2): it stays leader in this Ready, its
// term and vote are unchanged (only the commit index moved, which is never
// relied on from disk), and there is no snapshot. Safe because the
// followers' acknowledgements are stepped only after save returns (this
// loop is serial), so nothing counts the leader's copy before it is
// durable.
func (n *Node) maySendBeforeSave(rd *raft.Ready) bool {
	if n.role != raft.StateLeader || rd.SoftState != nil || !raft.IsEmptySnap(rd.Snapshot) {
		return false
	}
	hs := rd.HardState
	return hs == nil || (hs.GetTerm() == n.st.state.Term && hs.GetVote() == n.st.state.Vote)
}

// sendReplication sends the appends and heartbeats among msgs at once and
// returns the other messages, to be sent after save; the returned slice is
// valid until the next call.
func (n *Node) sendReplication(msgs []*raftpb.Message) (later []*raftpb.Message) {
	clear(n.sendLater) // the last Ready's, sent: let their messages go
	now, later := n.sendNow[:0], n.sendLater[:0]
	for _, m := range msgs {
		switch m.GetType() {
		case raftpb.MsgApp, raftpb.MsgHeartbeat:
			now = append(now, m)
		default:
			later = append(later, m)
		}
	}
	n.send(now)
	clear(now)
	n.sendNow, n.sendLater = now[:0], later
	return later
}

// durablePrefix returns the committed entries of rd that are already
// durable in the local log (all of them on a single voter; on a follower
// the ones not in rd.Entries). None if rd carries a snapshot, which must be
// restored first.
func (n *Node) durablePrefix(rd *raft.Ready) []*raftpb.Entry {
	if !raft.IsEmptySnap(rd.Snapshot) {
		return nil
	}
	ents := rd.CommittedEntries
	i := 0
	for i < len(ents) && ents[i].GetIndex() <= n.st.synced {
		i++
	}
	return ents[:i]
}

// noteState records a new term and leader; proposals that went to a
// leader of an older term and never showed up locally fail. It reports
// whether the leader changed.
func (n *Node) noteState(rd *raft.Ready) bool {
	if hs := rd.HardState; hs != nil && hs.GetTerm() > n.term {
		n.term = hs.GetTerm()
		n.w.termChanged(n.term)
	}
	changed := false
	if ss := rd.SoftState; ss != nil {
		if ss.RaftState == raft.StateLeader && n.role != raft.StateLeader && n.cfg.HandOver {
			// Only the voters that took part in the election (heard from
			// within the last election timeout) are candidates: a server
			// that joins later follows the leader it finds.
			n.handOverTo = map[uint64]bool{}
			for _, id := range n.confState.GetVoters() {
				if t, ok := n.heard[id]; ok && id > n.id && n.ticks-t <= uint64(n.cfg.ElectionTicks) {
					n.handOverTo[id] = true
				}
			}
			if len(n.handOverTo) > 0 {
				n.handOverUntil = n.ticks + 2*uint64(n.cfg.ElectionTicks)
			}
		}
		n.role = ss.RaftState
		if ss.Lead != n.lead {
			n.lead = ss.Lead
			n.logger.Info("raftnode: leader changed", "leader", n.lead, "term", n.term)
			changed = true
		}
	}
	if f := n.cfg.OnStateChange; f != nil {
		role := roleOf(n.role, n.isLearner())
		if n.reported.lead != n.lead || n.reported.role != role {
			n.reported.lead, n.reported.role = n.lead, role
			f(n.lead, role)
		}
	}
	return changed
}

// send hands the messages to the Transport, after save made what they
// announce durable.
func (n *Node) send(msgs []*raftpb.Message) {
	if len(msgs) == 0 {
		return
	}
	if n.cfg.Transport == nil {
		n.logger.Warn("raftnode: no transport; dropping messages", "count", len(msgs))
		return
	}
	n.cfg.Transport.Send(msgs)
}

// reportSnapshots tells raft that the snapshots just sent were delivered
// (the Transport does not report failures yet; if one was lost, the
// follower stays behind until raft probes it and sends another).
func (n *Node) reportSnapshots(msgs []*raftpb.Message) {
	if n.cfg.TransportReportsSnapshots {
		return
	}
	for _, m := range msgs {
		if m.GetType() == raftpb.MsgSnap {
			n.rn.ReportSnapshot(m.GetTo(), raft.SnapshotFinish)
		}
	}
}

// restoreReceived replaces the state machine with a snapshot from the
// leader (save has stored its file and reset the log).
func (n *Node) restoreReceived(snap *raftpb.Snapshot) error {
	data := snap.GetData()
	info, err := checkSnapshot(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	if err := n.sm.Restore(snapshotData(data, info)); err != nil {
		return err
	}
	index := snap.GetMetadata().GetIndex()
	n.setConfState(snap.GetMetadata().GetConfState())
	n.applied.Store(index)
	n.lastSnap = index
	n.w.snapshotRestored(index)
	n.logger.Info("raftnode: restored a snapshot from the leader", "index", index)
	return purgeSnapshots(n.cfg.Dir, n.cfg.SnapshotRetain, n.snapping)
}

// apply applies committed entries in order: normal entries to the state
// machine, conf changes to raft.
func (n *Node) apply(ents []*raftpb.Entry) error {
	for _, e := range ents {
		index := e.GetIndex()
		if index <= n.applied.Load() {
			continue // covered by a snapshot
		}
		switch e.GetType() {
		case raftpb.EntryNormal:
			node, seq, payload, ok := decodeFrame(e.GetData())
			var result any
			if ok {
				result = n.sm.Apply(index, payload)
			} else if len(e.GetData()) > 0 {
				n.logger.Error("raftnode: skipping an entry without a frame", "index", index)
			}
			n.w.applied(index, node, seq, ok, n.id, result)
		case raftpb.EntryConfChange, raftpb.EntryConfChangeV2:
			if err := n.applyConfChange(e); err != nil {
				return err
			}
			// The data proposed with the change (ProposeConfChange) is
			// applied at the same index; raft's own changes (leaving a
			// joint configuration) carry none.
			node, seq, payload, ok := decodeFrame(frameOf(e))
			var result any
			if ok && len(payload) > 0 {
				result = n.sm.Apply(index, payload)
			}
			n.w.applied(index, node, seq, ok, n.id, result)
		}
		n.applied.Store(index)
	}
	return nil
}

func (n *Node) applyConfChange(e *raftpb.Entry) error {
	var cc raftpb.ConfChangeI
	if e.GetType() == raftpb.EntryConfChange {
		var c raftpb.ConfChange
		if err := proto.Unmarshal(e.GetData(), &c); err != nil {
			return err
		}
		cc = &c
	} else {
		var c raftpb.ConfChangeV2
		if err := proto.Unmarshal(e.GetData(), &c); err != nil {
			return err
		}
		cc = &c
	}
	n.setConfState(n.rn.ApplyConfChange(cc))
	n.logger.Info("raftnode: membership changed", "index", e.GetIndex(), "voters", n.confState.GetVoters(), "learners", n.confState.GetLearners())
	return nil
}
