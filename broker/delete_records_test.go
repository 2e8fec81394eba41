package broker

import (
	"testing"
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// TestDeleteRecordsLowWatermark: the leader's start moves at once; the
// answer waits for the followers on live brokers (a follower that has not
// fetched counts as -1, one whose broker is down not at all), ends at the
// timeout, and fails with NOT_LEADER_OR_FOLLOWER when leadership moves.
func TestDeleteRecordsLowWatermark(t *testing.T) {
	_, part := newReplicatedTestBroker(t)
	for range 5 {
		if res := part.appendBatch(testBatchN(10, 10), time.Now()); res.code != kproto.CodeNone {
			t.Fatal(res.code)
		}
	}
	end := part.log.NextOffset()
	part.followerFetched(1, end, 0, time.Now())
	part.followerFetched(2, end, 0, time.Now())
	alive := map[int32]bool{1: true, 2: true}
	isAlive := func(id int32) bool { return alive[id] }
	never := make(chan struct{})
	if _, code, _ := part.deleteRecords(end + 1); code != kproto.CodeOffsetOutOfRange {
		t.Fatalf("past the high watermark: %d", code)
	}
	if off, code, _ := part.deleteRecords(0); code != 0 || off != 0 {
		t.Fatalf("delete to 0: %d %d", off, code)
	}
	if low, code := part.waitLowWatermark(0, isAlive, time.Now().Add(time.Minute), never); code != 0 || low != 0 {
		t.Fatalf("nothing to delete, followers at 0: %d %d", low, code)
	}
	off, code, err := part.deleteRecords(20)
	if err != nil || code != kproto.CodeNone || off != 20 || part.log.StartOffset() != 20 {
		t.Fatalf("delete to 20: %d %d %v, start %d", off, code, err, part.log.StartOffset())
	}
	if _, code := part.waitLowWatermark(20, isAlive, time.Now().Add(20*time.Millisecond), never); code != kproto.CodeRequestTimedOut {
		t.Fatalf("no follower moved: %d, want REQUEST_TIMED_OUT", code)
	}
	ch := make(chan [2]int64, 1)
	go func() {
		low, code := part.waitLowWatermark(20, isAlive, time.Now().Add(time.Minute), never)
		ch <- [2]int64{low, int64(code)}
	}()
	part.followerFetched(1, end, 20, time.Now())
	part.followerFetched(2, end, 30, time.Now()) // a follower may be ahead (its retention)
	if got := <-ch; got != [2]int64{20, 0} {
		t.Fatalf("both followed: %v, want low watermark 20", got)
	}
	off, _, _ = part.deleteRecords(-1) // the high watermark
	alive[2] = false
	if low, code := part.waitLowWatermark(off, isAlive, time.Now().Add(20*time.Millisecond), never); code != kproto.CodeRequestTimedOut {
		t.Fatalf("follower 1 behind: %d %d", low, code)
	}
	part.followerFetched(1, end, end, time.Now())
	if low, code := part.waitLowWatermark(off, isAlive, time.Now().Add(time.Minute), never); code != 0 || low != end {
		t.Fatalf("broker 2 down, follower 1 followed: %d %d, want %d", low, code, end)
	}
	if err := part.applyState(partState{leader: 1, epoch: 2, isr: []int32{1}, replicas: []int32{0, 1, 2}, zkVersion: 2}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, code, _ := part.deleteRecords(0); code != kproto.CodeNotLeaderOrFollower {
		t.Fatalf("as a follower: %d", code)
	}
}
