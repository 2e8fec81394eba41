package broker

import (
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// DeleteRecords on a partition (Kafka's Partition.deleteRecordsOnLeader
// and DelayedDeleteRecords). The leader moves its log start offset; each
// follower learns it from the log_start_offset of its fetch answers and
// moves its own (asFollower.Append), then reports it in its next fetch.
// The request is answered when the low watermark, the smallest log start
// offset over the leader and the replicas on live brokers, has reached
// the requested offset.

// deleteRecordsHighWatermark is DeleteRecords' "up to the high watermark".
const deleteRecordsHighWatermark = -1

// followerStartLocked records follower id's log start offset (from its
// fetch; -1 when the fetch version has none) and wakes a waiting
// DeleteRecords when it moved. p.mu must be held.
func (p *partition) followerStartLocked(id int32, start int64) {
	if cur, ok := p.mu.followerStarts[id]; p.mu.followerStarts == nil || start < 0 || (ok && cur == start) {
		return
	}
	p.mu.followerStarts[id] = start
	p.wakeLocked()
}

// deleteRecords moves the leader's log start offset to offset (-1: the
// high watermark) and returns the offset it asked for. Errors as Kafka:
// NOT_LEADER_OR_FOLLOWER, POLICY_VIOLATION for a topic without "delete"
// in cleanup.policy, OFFSET_OUT_OF_RANGE below 0 or above the high
// watermark, KAFKA_STORAGE_ERROR.
func (p *partition) deleteRecords(offset int64) (int64, kproto.ErrorCode, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.role != roleLeader {
		return -1, kproto.CodeNotLeaderOrFollower, nil
	}
	if !p.cfg.Load().compaction.delete {
		return -1, kproto.CodePolicyViolation, nil
	}
	if offset == deleteRecordsHighWatermark {
		offset = p.hw.Load()
	}
	if offset < 0 || offset > p.hw.Load() {
		return -1, kproto.CodeOffsetOutOfRange, nil
	}
	if offset > p.log.StartOffset() {
		if err := p.log.SetStartOffset(offset); err != nil {
			return -1, kproto.CodeKafkaStorageError, err
		}
		p.wakeLocked() // parked follower fetches answer with the new start
	}
	return offset, kproto.CodeNone, nil
}

// lowWatermarkLocked is Kafka's lowWatermarkIfLeader: the smallest log
// start offset of the leader and of the replicas whose broker is alive
// (-1 for one that has not fetched since this broker became leader).
// p.mu must be held.
func (p *partition) lowWatermarkLocked(alive func(id int32) bool) int64 {
	low := p.log.StartOffset()
	for _, id := range p.mu.replicas {
		if id == p.self || !alive(id) {
			continue
		}
		start, ok := p.mu.followerStarts[id]
		if !ok {
			start = -1
		}
		low = min(low, start)
	}
	return low
}

// waitLowWatermark waits until the low watermark reaches offset: NONE
// and the low watermark, REQUEST_TIMED_OUT at deadline,
// NOT_LEADER_OR_FOLLOWER when leadership moved.
func (p *partition) waitLowWatermark(offset int64, alive func(int32) bool, deadline time.Time, done <-chan struct{}) (int64, kproto.ErrorCode) {
	wake := make(chan struct{}, 1)
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		p.mu.Lock()
		if p.mu.role != roleLeader {
			p.mu.Unlock()
			return -1, kproto.CodeNotLeaderOrFollower
		}
		if low := p.lowWatermarkLocked(alive); low >= offset {
			p.mu.Unlock()
			return low, kproto.CodeNone
		}
		p.mu.waiters = append(p.mu.waiters, wake)
		p.mu.Unlock()
		select {
		case <-wake:
		case <-timer.C:
			p.removeWaiter(wake)
			return -1, kproto.CodeRequestTimedOut
		case <-done:
			p.removeWaiter(wake)
			return -1, kproto.CodeNotLeaderOrFollower
		}
	}
}
