package broker

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zkafka/zkafka/broker/replica"
	"github.com/zkafka/zkafka/kproto"
)

// A partition's role changes and the replication rules around them
// (Kafka's Partition.makeLeader / makeFollower, the leader's ISR and high
// watermark, the follower's appends). The rules themselves are
// broker/replica's pure LeaderState and truncation functions; this file
// applies them under partition.mu.

// partState is a partition's state znode as applyTopic read it.
type partState struct {
	leader, epoch int32
	isr, replicas []int32
	// zkVersion is the state znode's version (the partition epoch).
	zkVersion int32
}

// applyState gives the partition the role st names for this broker.
// It is called by applyTopic only, with cluster.applyMu held.
func (p *partition) applyState(st partState, now time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.leader >= 0 && st.epoch < p.leaderEpoch.Load() {
		// A state read before a newer one was applied: nothing of it is
		// taken, its replicas neither (they would refuse a new follower).
		return fmt.Errorf("leader epoch %d is older than %d", st.epoch, p.leaderEpoch.Load())
	}
	p.mu.replicas = slices.Clone(st.replicas)
	switch {
	case st.leader == p.self:
		return p.makeLeaderLocked(st, now)
	case st.leader >= 0:
		return p.makeFollowerLocked(st)
	default:
		p.mu.role, p.mu.leaderID, p.mu.leader = roleNone, -1, nil
		p.mu.isr, p.mu.partitionEpoch = slices.Clone(st.isr), st.zkVersion
		p.leaderEpoch.Store(max(p.leaderEpoch.Load(), st.epoch))
		p.wakeLocked()
		return nil
	}
}

// makeLeaderLocked: a new leader epoch starts at the log end (in the
// epoch cache) and the followers' positions start unknown; the same epoch
// again takes a newer ISR (an AlterPartition answer seen through the
// watch) and the assignment, as Kafka's makeLeader does. p.mu must be held.
func (p *partition) makeLeaderLocked(st partState, now time.Time) error {
	if p.mu.role == roleLeader && st.epoch == p.leaderEpoch.Load() {
		if st.zkVersion > p.mu.partitionEpoch {
			p.commitISRLocked(st.isr, st.zkVersion)
		}
		p.mu.leader.SetReplicas(st.replicas) // the assignment can move within an epoch
		return nil
	}
	if st.epoch < p.leaderEpoch.Load() {
		return fmt.Errorf("leader epoch %d is older than %d", st.epoch, p.leaderEpoch.Load())
	}
	leo := p.log.NextOffset()
	if err := p.epochs.Assign(st.epoch, leo); err != nil {
		return err
	}
	p.leaderEpoch.Store(st.epoch)
	p.mu.role, p.mu.leaderID = roleLeader, p.self
	p.mu.isr, p.mu.partitionEpoch = slices.Clone(st.isr), st.zkVersion
	p.mu.leader = replica.NewLeaderState(p.self, st.replicas, st.isr, p.hw.Load(), leo, now)
	p.mu.followerStarts = map[int32]int64{}
	p.advanceLocked()
	p.wakeLocked()
	return nil
}

// makeFollowerLocked: the partition follows st.leader in st.epoch; its
// log is cut, if it diverged, by the first fetches (KIP-320: the leader
// answers DivergingEpoch). p.mu must be held.
func (p *partition) makeFollowerLocked(st partState) error {
	if st.epoch < p.leaderEpoch.Load() {
		return fmt.Errorf("leader epoch %d is older than %d", st.epoch, p.leaderEpoch.Load())
	}
	p.leaderEpoch.Store(st.epoch)
	p.mu.role, p.mu.leaderID, p.mu.leader = roleFollower, st.leader, nil
	p.mu.isr, p.mu.partitionEpoch = slices.Clone(st.isr), st.zkVersion
	p.wakeLocked()
	return nil
}

// following reports the leader this partition fetches from (ok false
// when it leads or has no leader).
func (p *partition) following() (leader int32, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.leaderID, p.mu.role == roleFollower
}

// isLeader reports whether this broker leads the partition now.
func (p *partition) isLeader() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.role == roleLeader
}

// isrSize is the committed ISR's size.
func (p *partition) isrSize() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.isr)
}

// setHighWatermark sets the high watermark read from
// replication-offset-checkpoint, bounded by the log end.
func (p *partition) setHighWatermark(hw int64) {
	p.mu.Lock()
	p.hw.Store(min(max(hw, p.log.StartOffset()), p.log.NextOffset()))
	p.hwMovedLocked()
	p.mu.Unlock()
}

// advanceLocked moves a leader's high watermark (never down) and wakes
// the waiters when it moved. p.mu must be held.
func (p *partition) advanceLocked() {
	if p.mu.leader == nil {
		return
	}
	if p.mu.leader.Advance(p.log.NextOffset()) {
		p.hw.Store(p.mu.leader.HW)
		p.hwMovedLocked()
		p.wakeLocked()
	}
}

// followerFetched records a follower's fetch at fetchOffset (its log end
// offset) with its log start logStart on the leader: it may move the high
// watermark, the low watermark a DeleteRecords waits for, and ask for this
// follower's return to the ISR (only this one's: see replica.MayJoin).
// ok is false when this broker no longer leads, or id is not a replica.
func (p *partition) followerFetched(id int32, fetchOffset, logStart int64, now time.Time) (ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ls := p.mu.leader
	if p.mu.role != roleLeader || ls == nil || !ls.UpdateFollower(id, fetchOffset, p.log.NextOffset(), now) {
		return false
	}
	p.followerStartLocked(id, logStart)
	p.advanceLocked()
	if ls.Pending == nil && ls.MayJoin(id) {
		p.proposeISRLocked(append(slices.Clone(ls.ISR), id))
	}
	return true
}

// isReplica reports whether id is in the partition's assignment.
func (p *partition) isReplica(id int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.mu.replicas, id)
}

// maybeShrinkISR takes out of the ISR the followers that have not caught
// up within lag (Kafka's maybeShrinkIsr, run every lag/2).
func (p *partition) maybeShrinkISR(now time.Time, lag time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ls := p.mu.leader
	if p.mu.role != roleLeader || ls == nil || ls.Pending != nil {
		return
	}
	if out := ls.OutOfSync(now, lag); len(out) > 0 {
		p.proposeISRLocked(slices.DeleteFunc(slices.Clone(ls.ISR), func(id int32) bool { return slices.Contains(out, id) }))
	}
}

// proposeISRLocked records isr as pending and has the broker send it.
// p.mu must be held.
func (p *partition) proposeISRLocked(isr []int32) {
	slices.Sort(isr)
	p.mu.leader.Pending = isr
	if p.onISRChange != nil {
		p.onISRChange(p)
	}
}

// pendingISR is the proposal to send: the leader epoch, the ISR and the
// partition epoch it builds on; ok is false when there is none.
func (p *partition) pendingISR() (epoch int32, isr []int32, partitionEpoch int32, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.role != roleLeader || p.mu.leader == nil || p.mu.leader.Pending == nil {
		return 0, nil, 0, false
	}
	return p.leaderEpoch.Load(), slices.Clone(p.mu.leader.Pending), p.mu.partitionEpoch, true
}

// isrAnswered applies the controller's answer to the proposal proposed
// made in leader epoch epoch: the new ISR at partitionEpoch, or (failed)
// the proposal dropped, to be made again from the state the watch brings.
// An answer to a proposal that is no longer the pending one changes
// nothing but a newer ISR.
func (p *partition) isrAnswered(epoch int32, proposed, isr []int32, partitionEpoch int32, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.role != roleLeader || p.mu.leader == nil || p.leaderEpoch.Load() != epoch {
		return
	}
	current := slices.Equal(p.mu.leader.Pending, proposed)
	switch {
	case failed:
		if current {
			p.mu.leader.Pending = nil
		}
	case partitionEpoch > p.mu.partitionEpoch:
		pending := p.mu.leader.Pending
		p.commitISRLocked(isr, partitionEpoch)
		if !current {
			p.mu.leader.Pending = pending // a newer proposal, queued
		}
	}
}

// commitISRLocked takes a committed ISR; a shrink may move the high
// watermark up. p.mu must be held.
func (p *partition) commitISRLocked(isr []int32, partitionEpoch int32) {
	p.mu.isr, p.mu.partitionEpoch = slices.Clone(isr), partitionEpoch
	if ls := p.mu.leader; ls != nil {
		ls.ISR, ls.Pending = slices.Clone(isr), nil
	}
	p.advanceLocked()
	p.wakeLocked() // acks=all waiters re-check the ISR size
}

// waitCommitted waits, for an acks=all produce, until the high watermark
// reaches end (the offset after the batch), then checks the ISR against
// minISR (Kafka's Partition.checkEnoughReplicasReachOffset): NONE,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT at deadline,
// NOT_LEADER_OR_FOLLOWER if leadership moved meanwhile.
func (p *partition) waitCommitted(end int64, minISR int, deadline time.Time, done <-chan struct{}) kproto.ErrorCode {
	wake := make(chan struct{}, 1)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		p.mu.Lock()
		switch {
		case p.mu.role != roleLeader:
			p.mu.Unlock()
			return kproto.CodeNotLeaderOrFollower
		case p.hw.Load() >= end:
			n := len(p.mu.isr)
			p.mu.Unlock()
			if n < minISR {
				return kproto.CodeNotEnoughReplicasAfterAppend
			}
			return kproto.CodeNone
		}
		p.mu.waiters = append(p.mu.waiters, wake)
		p.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(time.Until(deadline))
		}
		select {
		case <-wake:
		case <-timer.C:
			p.removeWaiter(wake)
			return kproto.CodeRequestTimedOut
		case <-done:
			p.removeWaiter(wake)
			return kproto.CodeNotLeaderOrFollower
		}
	}
}

// asFollower is the partition as its fetcher sees it (replica.Local).
type asFollower struct{ p *partition }

func (f asFollower) Epochs() *replica.EpochCache { return f.p.epochs }

func (f asFollower) Position() (replica.Position, bool) {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.role != roleFollower {
		return replica.Position{}, false
	}
	return replica.Position{TopicID: p.topicID, LeaderEpoch: p.leaderEpoch.Load(), LEO: p.log.NextOffset(),
		LastEpoch: p.epochs.Latest(), LogStart: p.log.StartOffset(), HW: p.hw.Load()}, true
}

// followingLocked reports whether a fetch made in epoch may change the
// log. p.mu must be held.
func (p *partition) followingLocked(epoch int32) bool {
	return p.mu.role == roleFollower && p.leaderEpoch.Load() == epoch
}

var errLeaderBatch = errors.New("replica: leader sent a bad batch")

// Append appends the leader's batches at their offsets (Kafka's
// appendRecordsToFollowerOrFutureReplica): each batch's CRC is checked,
// its partition leader epoch enters the epoch cache, idempotent
// producers are recorded, and the high watermark becomes
// min(leaderHW, log end).
func (f asFollower) Append(epoch int32, batches []byte, leaderHW, leaderStart int64) error {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.followingLocked(epoch) {
		return replica.ErrStale
	}
	it := kproto.SplitBatches(batches)
	appended := false
	for {
		b, ok := it.Next()
		if !ok {
			break
		}
		leo := p.log.NextOffset()
		if b.LastOffset() < leo {
			continue // already held (cannot happen: fetches start at the log end)
		}
		if b.Magic() < 2 || !b.VerifyCRC() || b.BaseOffset() < leo {
			return fmt.Errorf("%w at offset %d (log end %d)", errLeaderBatch, b.BaseOffset(), leo)
		}
		if pe := b.PartitionLeaderEpoch(); pe > p.epochs.Latest() {
			if err := p.epochs.Assign(pe, b.BaseOffset()); err != nil {
				return err
			}
		}
		before := p.log.ActiveBase()
		if _, err := p.log.AppendAt(b, b.NumRecords(), b.MaxTimestamp(), b.BaseOffset()); err != nil {
			return err
		}
		p.snapshotIfRolledLocked(before)
		p.recordBatchLocked(b, b.BaseOffset())
		appended = true
	}
	// A trailing partial batch (the leader's size limit) is fetched again.
	if leaderStart > p.log.StartOffset() && leaderStart <= p.log.NextOffset() {
		if err := p.log.SetStartOffset(leaderStart); err != nil {
			return err
		}
	}
	hw := min(leaderHW, p.log.NextOffset())
	if hw != p.hw.Load() && hw >= 0 {
		p.hw.Store(hw)
		p.hwMovedLocked()
		appended = true
	}
	if appended {
		p.wakeLocked()
	}
	return nil
}

// Truncate cuts the log to offset (what is below stays), with the epoch
// cache, the producer state and the high watermark.
func (f asFollower) Truncate(epoch int32, offset int64) error {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.followingLocked(epoch) {
		return replica.ErrStale
	}
	if offset >= p.log.NextOffset() {
		// Nothing to cut, but an epoch this broker took as leader and
		// wrote nothing in (its start at the log end) goes, or the next
		// fetch names it again and diverges again (Kafka's truncateTo
		// does the same).
		return p.epochs.TruncateFromEnd(p.log.NextOffset())
	}
	if _, err := p.log.Truncate(offset); err != nil {
		return err
	}
	return p.afterTruncateLocked()
}

// Reset empties the log and restarts it at offset (the leader's log
// start is past this log's end).
func (f asFollower) Reset(epoch int32, offset int64) error {
	p := f.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.followingLocked(epoch) {
		return replica.ErrStale
	}
	if err := p.log.SetStartOffset(offset); err != nil {
		return err
	}
	return p.afterTruncateLocked()
}

// afterTruncateLocked brings the epoch cache, producer state and high
// watermark in line with a cut log. p.mu must be held.
func (p *partition) afterTruncateLocked() error {
	leo := p.log.NextOffset()
	if err := p.epochs.TruncateFromEnd(leo); err != nil {
		return err
	}
	if p.log.StartOffset() >= leo {
		if err := p.epochs.TruncateFromEnd(0); err != nil {
			return err
		}
	}
	p.hw.Store(min(p.hw.Load(), leo))
	p.deleteSnapshotsAbove(leo)
	clear(p.mu.producers)
	clear(p.mu.verified)
	p.mu.unstable = p.mu.unstable[:0]
	_, err := p.loadProducers()
	p.hwMovedLocked()
	return err
}
