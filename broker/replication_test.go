package broker

import (
	"bytes"
	"encoding/binary"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// newReplicatedTestBroker is newTestBroker with partition t-0 led by this
// broker (0) with followers 1 and 2, all three in the ISR.
func newReplicatedTestBroker(t *testing.T) (*Broker, *partition) {
	b, part := newTestBroker(t)
	st := partState{leader: 0, epoch: 1, isr: []int32{0, 1, 2}, replicas: []int32{0, 1, 2}, zkVersion: 1}
	if err := part.applyState(st, time.Now()); err != nil {
		t.Fatal(err)
	}
	tp := b.cluster.topic("t")
	tp.replicas, tp.isr = [][]int32{{0, 1, 2}}, [][]int32{{0, 1, 2}}
	return b, part
}

// fetchAt runs one partition of a Fetch (v13) at offset as replica
// (-1: a consumer).
func fetchAt(t *testing.T, b *Broker, replicaID int32, offset int64) fetchPart {
	t.Helper()
	return fetchAtEpoch(t, b, replicaID, offset, -1)
}

// fetchAtEpoch is fetchAt with a last_fetched_epoch.
func fetchAtEpoch(t *testing.T, b *Broker, replicaID int32, offset int64, lastEpoch int32) fetchPart {
	t.Helper()
	s, c := net.Pipe()
	defer s.Close()
	defer c.Close()
	cn := newConn(b, s)
	req := &kproto.FetchRequest{Version: 13, ReplicaID: replicaID, MaxBytes: 1 << 20}
	rp := &kproto.FetchPartition{FetchOffset: offset, CurrentLeaderEpoch: -1, LastFetchedEpoch: lastEpoch, PartitionMaxBytes: 1 << 20}
	var fp fetchPart
	cn.fetchPartition(req, b.cluster.topic("t"), rp, &fp, 0, 1<<20)
	t.Cleanup(fp.rng.Release)
	return fp
}

// TestConsumersReadUpToTheHighWatermark: appended records are invisible
// to consumers (and ListOffsets' latest stays) until every ISR member
// has fetched them; followers read them at once.
func TestConsumersReadUpToTheHighWatermark(t *testing.T) {
	b, part := newReplicatedTestBroker(t)
	for range 3 {
		if res := part.appendBatch(testBatch(100), time.Now()); res.code != kproto.CodeNone {
			t.Fatal(res.code)
		}
	}
	leo := part.log.NextOffset()
	if fp := fetchAt(t, b, -1, 0); fp.rng.Len != 0 || fp.resp.HighWatermark != 0 || fp.resp.ErrorCode != kproto.CodeNone {
		t.Fatalf("consumer before replication: %d bytes, hw %d, error %d", fp.rng.Len, fp.resp.HighWatermark, fp.resp.ErrorCode)
	}
	if fp := fetchAt(t, b, 1, 0); fp.rng.Len == 0 {
		t.Fatal("follower 1 read nothing below the log end")
	}
	fetchAt(t, b, 1, leo) // follower 1 has it all; 2 has not fetched
	if hw := part.highWatermark(); hw != 0 {
		t.Fatalf("hw %d with follower 2 unknown, want 0", hw)
	}
	fetchAt(t, b, 2, 2) // follower 2 holds the first two batches
	if fp := fetchAt(t, b, -1, 0); fp.rng.NextOffset != 2 || fp.resp.HighWatermark != 2 {
		t.Fatalf("consumer read up to %d (hw %d), want 2", fp.rng.NextOffset, fp.resp.HighWatermark)
	}
	if fp := fetchAt(t, b, -1, 2); fp.rng.Len != 0 || fp.resp.ErrorCode != kproto.CodeNone {
		t.Fatalf("consumer at the hw: %d bytes, error %d; want an empty answer", fp.rng.Len, fp.resp.ErrorCode)
	}
	fetchAt(t, b, 2, leo)
	if fp := fetchAt(t, b, -1, 0); part.highWatermark() != leo || fp.rng.NextOffset != leo {
		t.Fatalf("hw %d, consumer read to %d; want %d", part.highWatermark(), fp.rng.NextOffset, leo)
	}
	if fp := fetchAt(t, b, -1, leo+1); fp.resp.ErrorCode != kproto.CodeOffsetOutOfRange {
		t.Fatalf("past the log end: error %d", fp.resp.ErrorCode)
	}
}

// TestAcksAllWaits: an acks=all wait ends when the ISR has the batch, at
// the timeout, with NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank
// below min.insync.replicas, and with NOT_LEADER_OR_FOLLOWER when
// leadership moved.
func TestAcksAllWaits(t *testing.T) {
	_, part := newReplicatedTestBroker(t)
	never := make(chan struct{})
	appendOne := func() int64 {
		if res := part.appendBatch(testBatch(10), time.Now()); res.code != kproto.CodeNone {
			t.Fatal(res.code)
		}
		return part.log.NextOffset()
	}
	wait := func(end int64, minISR int, d time.Duration) chan kproto.ErrorCode {
		ch := make(chan kproto.ErrorCode, 1)
		go func() { ch <- part.waitCommitted(end, minISR, time.Now().Add(d), never) }()
		return ch
	}
	end := appendOne()
	if code := <-wait(end, 2, 20*time.Millisecond); code != kproto.CodeRequestTimedOut {
		t.Fatalf("no follower fetched: %d, want REQUEST_TIMED_OUT", code)
	}
	ch := wait(end, 2, time.Minute)
	part.followerFetched(1, end, 0, time.Now())
	part.followerFetched(2, end, 0, time.Now())
	if code := <-ch; code != kproto.CodeNone {
		t.Fatalf("all fetched: %d", code)
	}
	end = appendOne()
	ch = wait(end, 2, time.Minute)
	part.followerFetched(1, end, 0, time.Now())
	part.isrAnswered(1, nil, []int32{0}, 2, false) // the controller took 1 and 2 out
	if code := <-ch; code != kproto.CodeNotEnoughReplicasAfterAppend {
		t.Fatalf("ISR shrank to the leader: %d, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", code)
	}
	end = appendOne()
	if code := <-wait(end, 1, time.Minute); code != kproto.CodeNone {
		t.Fatalf("ISR of one, min.insync.replicas 1: %d", code)
	}
	part.isrAnswered(1, nil, []int32{0, 1}, 3, false)
	end = appendOne()
	ch = wait(end, 1, time.Minute)
	if err := part.applyState(partState{leader: 1, epoch: 2, isr: []int32{1}, replicas: []int32{0, 1, 2}, zkVersion: 4}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if code := <-ch; code != kproto.CodeNotLeaderOrFollower {
		t.Fatalf("leadership moved: %d", code)
	}
	if res := part.appendBatch(testBatch(10), time.Now()); res.code != kproto.CodeNotLeaderOrFollower {
		t.Fatalf("append as a follower: %d", res.code)
	}
}

// TestFollowerProducerStateDeduplicates: a follower records the
// idempotent producers of the batches it copies, so that after it
// becomes leader a producer's retry of a batch the old leader wrote is
// answered with the original offset and not appended again; the
// leader's epochs enter the follower's epoch cache from the batches.
func TestFollowerProducerStateDeduplicates(t *testing.T) {
	_, part := newTestBroker(t)
	if err := part.applyState(partState{leader: 5, epoch: 3, isr: []int32{5, 0}, replicas: []int32{5, 0}, zkVersion: 1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The leader's batches: producer 77, sequences 0 and 1, at offsets
	// 0 and 1, written in epoch 3.
	var fetched []byte
	for seq := int32(0); seq < 2; seq++ {
		b := kproto.Batch(idempotentBatch(77, 0, seq))
		b.SetBaseOffset(int64(seq))
		b.SetPartitionLeaderEpoch(3)
		fetched = append(fetched, b...)
	}
	f := asFollower{part}
	if err := f.Append(2, fetched, 2, 0); err == nil {
		t.Fatal("an append from an older epoch's fetch was taken")
	}
	if err := f.Append(3, fetched, 1, 0); err != nil {
		t.Fatal(err)
	}
	if part.log.NextOffset() != 2 || part.highWatermark() != 1 || part.epochs.Latest() != 3 {
		t.Fatalf("log end %d, hw %d, latest epoch %d; want 2, 1 (the leader's), 3", part.log.NextOffset(), part.highWatermark(), part.epochs.Latest())
	}
	if err := part.applyState(partState{leader: 0, epoch: 4, isr: []int32{0}, replicas: []int32{5, 0}, zkVersion: 2}, time.Now()); err != nil {
		t.Fatal(err)
	}
	res := part.appendBatch(idempotentBatch(77, 0, 1), time.Now()) // the producer's retry of sequence 1
	if res.code != kproto.CodeNone || res.baseOffset != 1 || part.log.NextOffset() != 2 {
		t.Fatalf("retry after failover: code %d base %d, log end %d; want the original offset 1, no append", res.code, res.baseOffset, part.log.NextOffset())
	}
	if res := part.appendBatch(idempotentBatch(77, 0, 2), time.Now()); res.code != kproto.CodeNone || res.baseOffset != 2 {
		t.Fatalf("next sequence: code %d base %d", res.code, res.baseOffset)
	}
	if err := f.Append(4, fetched, 2, 0); err == nil {
		t.Fatal("a leader took a follower's append")
	}
}

// idempotentBatch is testBatch(10) from producer pid (epoch) at seq.
func idempotentBatch(pid int64, epoch int16, seq int32) []byte {
	b := kproto.Batch(testBatch(10))
	binary.BigEndian.PutUint64(b[43:], uint64(pid))
	binary.BigEndian.PutUint16(b[51:], uint16(epoch))
	binary.BigEndian.PutUint32(b[53:], uint32(seq))
	b.SetCRC()
	return b
}

// TestTruncateDropsAnEmptyEpoch: a former leader that took epoch 1 and
// wrote nothing in it follows a leader that never knew epoch 1; the
// divergence answer cuts nothing from its log but must drop epoch 1 from
// its cache, or its next fetch names epoch 1 again forever.
func TestTruncateDropsAnEmptyEpoch(t *testing.T) {
	_, part := newTestBroker(t) // leads t-0 in epoch 0
	if res := part.appendBatch(testBatch(10), time.Now()); res.code != kproto.CodeNone {
		t.Fatal(res.code)
	}
	if err := part.applyState(partState{leader: 0, epoch: 1, isr: []int32{0}, replicas: []int32{0, 1}, zkVersion: 1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := part.applyState(partState{leader: 1, epoch: 2, isr: []int32{1}, replicas: []int32{0, 1}, zkVersion: 2}, time.Now()); err != nil {
		t.Fatal(err)
	}
	f := asFollower{part}
	pos, ok := f.Position()
	if !ok || pos.LastEpoch != 1 || pos.LEO != 1 {
		t.Fatalf("position %+v %v", pos, ok)
	}
	// The leader knows epochs 0 (ending at 1) and 2: DivergingEpoch{0, 1}.
	if err := f.Truncate(2, 1); err != nil {
		t.Fatal(err)
	}
	if pos, _ := f.Position(); pos.LastEpoch != 0 || pos.LEO != 1 {
		t.Fatalf("after the divergence answer: %+v; want last epoch 0 at log end 1", pos)
	}
}

// TestHighWatermarkCheckpointRoundTrip: the broker writes each log dir's
// replication-offset-checkpoint from its partitions and a reopened
// partition starts from it, bounded by its log end.
func TestHighWatermarkCheckpointRoundTrip(t *testing.T) {
	b, part := newTestBroker(t)
	b.initReplication()
	for range 3 {
		part.appendBatch(testBatch(10), time.Now())
	}
	if part.highWatermark() != 3 {
		t.Fatalf("hw %d, want 3 (ISR of one)", part.highWatermark())
	}
	b.checkpointHighWatermarks()
	if hw := b.checkpointedHW(part.dir, "t", 0); hw != 3 {
		t.Fatalf("checkpointed %d, want 3", hw)
	}
	part.setHighWatermark(0)
	part.setHighWatermark(99)
	if hw := part.highWatermark(); hw != 3 {
		t.Fatalf("a checkpoint past the log end gave hw %d, want the log end 3", hw)
	}
}

// TestLeaderAnswersDivergingEpoch: a follower whose last fetched epoch
// the leader does not have, or that ends before its fetch offset, gets
// DivergingEpoch (the tag kmsg decodes) and no records, and its position
// is not recorded; one in line gets records.
func TestLeaderAnswersDivergingEpoch(t *testing.T) {
	b, part := newReplicatedTestBroker(t) // epoch 1 from offset 0
	for range 5 {
		part.appendBatch(testBatch(10), time.Now())
	}
	st := partState{leader: 0, epoch: 3, isr: []int32{0, 1, 2}, replicas: []int32{0, 1, 2}, zkVersion: 5}
	if err := part.applyState(st, time.Now()); err != nil { // epoch 3 from offset 5
		t.Fatal(err)
	}
	for range 3 {
		part.appendBatch(testBatch(10), time.Now())
	}
	for _, tc := range []struct {
		name      string
		lastEpoch int32
		offset    int64
		diverged  bool
		epoch     int32
		end       int64
	}{
		{"epoch 2 unknown: epoch 1 ends at 5", 2, 7, true, 1, 5},
		{"epoch 1 past its end", 1, 6, true, 1, 5},
		{"epoch 1 at its end", 1, 5, false, 0, 0},
		{"the current epoch", 3, 8, false, 0, 0},
	} {
		fp := fetchAtEpoch(t, b, 1, tc.offset, tc.lastEpoch)
		if fp.resp.ErrorCode != kproto.CodeNone || (fp.resp.Tags != nil) != tc.diverged {
			t.Fatalf("%s: error %d, tags %x", tc.name, fp.resp.ErrorCode, fp.resp.Tags)
		}
		if !tc.diverged {
			continue
		}
		want := kproto.AppendDivergingEpochTags(nil, tc.epoch, tc.end)
		if !bytes.Equal(fp.resp.Tags, want) || fp.rng.Len != 0 {
			t.Fatalf("%s: tags %x (want %x), %d record bytes", tc.name, fp.resp.Tags, want, fp.rng.Len)
		}
	}
	if hw := part.highWatermark(); hw != 0 {
		t.Fatalf("hw %d: diverged fetches must not count as positions", hw)
	}
}

// TestStaleFollowerStaysOut: follower 2 stopped fetching at the log end,
// and the log has not moved since (producers waiting on the acks=all it
// held up). Once the ISR shrank without it, the other follower's fetches
// must not bring it back on its stale offset (equal to the high
// watermark): only a fetch of its own does.
func TestStaleFollowerStaysOut(t *testing.T) {
	b, part := newReplicatedTestBroker(t)
	if res := part.appendBatch(testBatch(10), time.Now()); res.code != kproto.CodeNone {
		t.Fatal(res.code)
	}
	leo := part.log.NextOffset()
	fetchAt(t, b, 1, leo)
	fetchAt(t, b, 2, leo)
	part.isrAnswered(1, nil, []int32{0, 1}, 2, false) // the shrink of 2 committed
	fetchAt(t, b, 1, leo)
	if _, isr, _, ok := part.pendingISR(); ok {
		t.Fatalf("follower 1's fetch proposed ISR %v: the stale follower 2 rejoined", isr)
	}
	fetchAt(t, b, 2, leo)
	if _, isr, _, ok := part.pendingISR(); !ok || !slices.Equal(isr, []int32{0, 1, 2}) {
		t.Fatalf("follower 2 fetched at the log end: pending %v (%v), want [0 1 2]", isr, ok)
	}
}

// TestAlterPartitionCarriesBrokerEpoch: the leader's AlterPartition names
// its registration's czxid (the broker epoch), read when it is sent, so
// the controller can refuse a leader whose registration is stale.
func TestAlterPartitionCarriesBrokerEpoch(t *testing.T) {
	b, part := newReplicatedTestBroker(t)
	b.epochs.broker.Store(4242)
	part.mu.Lock()
	part.proposeISRLocked([]int32{0, 1})
	part.mu.Unlock()
	req, _ := b.alterPartitionRequest([]*partition{part})
	if req.BrokerID != b.cfg.BrokerID || req.BrokerEpoch != 4242 {
		t.Fatalf("AlterPartition broker %d epoch %d, want %d epoch 4242", req.BrokerID, req.BrokerEpoch, b.cfg.BrokerID)
	}
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 || !slices.Equal(req.Topics[0].Partitions[0].NewISR, []int32{0, 1}) {
		t.Fatalf("AlterPartition topics %+v, want t-0 with ISR [0 1]", req.Topics)
	}
	b.epochs.broker.Store(4343) // registered again after a session loss
	if req, _ := b.alterPartitionRequest([]*partition{part}); req.BrokerEpoch != 4343 {
		t.Fatalf("after re-registration: epoch %d, want 4343", req.BrokerEpoch)
	}
}

// TestStaleStateKeepsReplicas: a state read before a newer one was
// applied (a reload racing a reassignment's LeaderAndIsr: replicas [0],
// epoch 1, after [0 3], epoch 2) is refused whole; its replicas must not
// replace the newer ones, or the leader would answer the new follower 3
// as a non-replica for good.
func TestStaleStateKeepsReplicas(t *testing.T) {
	_, part := newTestBroker(t)
	now := time.Now()
	if err := part.applyState(partState{leader: 0, epoch: 1, isr: []int32{0}, replicas: []int32{0}, zkVersion: 1}, now); err != nil {
		t.Fatal(err)
	}
	if err := part.applyState(partState{leader: 0, epoch: 2, isr: []int32{0}, replicas: []int32{0, 3}, zkVersion: 2}, now); err != nil {
		t.Fatal(err)
	}
	if err := part.applyState(partState{leader: 0, epoch: 1, isr: []int32{0}, replicas: []int32{0}, zkVersion: 1}, now); err == nil {
		t.Fatal("a state of an older leader epoch was taken")
	}
	if !part.isReplica(3) {
		t.Fatal("the stale state's replicas replaced the newer ones: follower 3 is no replica")
	}
	if !part.isLeader() || part.leaderEpoch.Load() != 2 {
		t.Fatalf("leader %v epoch %d, want leader at epoch 2", part.isLeader(), part.leaderEpoch.Load())
	}
}
