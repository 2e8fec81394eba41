package broker

import (
	"errors"
	"time"

	"github.com/zkafka/zkafka/broker/replica"
	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// Fetch (key 1), v0-13, kproto's hand-written codec and its
// FetchResponseWriter: the response is built with holes where record
// bytes go, and the writer goroutine sends those bytes from the segment
// files with sendfile (conn.sendRecords): record bytes never enter user
// space.
//
//   - long poll: when fewer than min_bytes are available the fetch parks
//     on every requested partition's waiter list (partition.addWaiter)
//     and wakes on the next append, on max_wait_ms, or on shutdown. No
//     polling loop;
//   - limits: partition_max_bytes per partition and max_bytes (v3+) for
//     the response; the first partition with data may exceed both by one
//     batch (KIP-74), later partitions stop at the limits;
//   - isolation: READ_COMMITTED reads up to the last stable offset and
//     reports the aborted transactions of the range returned
//     (partition_txn_fetch.go); null for READ_UNCOMMITTED;
//   - errors per partition: UNKNOWN_TOPIC_OR_PARTITION (UNKNOWN_TOPIC_ID
//     for ids in v13), NOT_LEADER_OR_FOLLOWER, OFFSET_OUT_OF_RANGE,
//     KAFKA_STORAGE_ERROR;
//   - fetch sessions (KIP-227, v7+; fetch_session.go): a full fetch of
//     epoch 0 opens a session when a slot is free, an incremental fetch
//     reads every partition of its session and is answered with those
//     with news; FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH
//     and FETCH_SESSION_TOPIC_ID_ERROR as Kafka;
//   - follower fetches (replica_id >= 0, Kafka's Partition.fetchRecords):
//     only from a broker in the partition's assignment (else
//     NOT_LEADER_OR_FOLLOWER, or UNKNOWN_LEADER_EPOCH with a
//     current_leader_epoch, as Kafka); v12+ last_fetched_epoch is checked
//     against the epoch cache and a diverged follower gets DivergingEpoch
//     and no records (KIP-320); followers read up to the log end offset,
//     consumers up to the high watermark; each follower fetch records the
//     follower's log end offset (partition_replica.go), which moves the
//     high watermark and the ISR. Nothing in a fetch changes the leader's
//     log. A leader-throttled partition (throttle.go) gets no records for
//     a follower out of the ISR while the leader's replication rate is
//     over its bound;
//   - fetch from the closest replica (KIP-392, fetch_replica.go): consumer
//     fetches of v11+ are served by followers too, up to their high
//     watermark, and leaders answer a consumer that names its rack with a
//     preferred read replica under RackAwareReplicaSelector.

func init() { regKey(kproto.KeyFetch, 0, kproto.FetchMaxVersion, handleFetch) }

// fetchPart is one partition's answer while a fetch is assembled.
type fetchPart struct {
	resp kproto.FetchPartitionResponse
	rng  segment.FileRange // Len 0 when there are no records
	part *partition        // nil on error
	// hw is the bound read up to: the high watermark for consumers (the
	// last stable offset at read_committed), the log end for followers; a
	// long poll wakes when it moves.
	hw        int64
	follower  bool
	isolation int8
	// omit: an incremental session's answer leaves the partition out.
	omit bool
	// throttled: a follower fetch of a leader-throttled partition, whose
	// bytes count against the leader's replication quota (throttle.go).
	throttled bool
}

// bound is fp's read bound now.
func (fp *fetchPart) bound() int64 {
	if fp.follower {
		return fp.part.log.NextOffset()
	}
	return fp.part.consumerBound(fp.isolation)
}

// fetchState is the per-connection scratch of the fetch path.
type fetchState struct {
	parts   [][]fetchPart // by request topic, then partition
	topics  []*topic
	w       kproto.FetchResponseWriter
	session fetchSessionState
	// The long poll's wake-up channel, timer and parked partitions, made
	// once per connection (waitForData): a consumer at the log end parks
	// on most of its fetches.
	wake   chan struct{}
	timer  *time.Timer
	parked []*partition
}

func handleFetch(c *conn, hdr *kproto.RequestHeader, body []byte) (*response, error) {
	req := &c.fetchReq
	if err := req.Decode(hdr.APIVersion, body); err != nil {
		return nil, err
	}
	fs := &c.fetch
	head := kproto.FetchResponseHead{}
	c.capFetchToQuota(hdr, req)
	req, ok := c.openFetchSession(req, &head)
	if !ok {
		return c.writeFetch(hdr, req, &head, false), nil
	}
	deadline := time.Now().Add(time.Duration(max(req.MaxWaitMillis, 0)) * time.Millisecond)
	for {
		n, failed := c.gatherFetch(req)
		if n >= int64(req.MinBytes) || failed || !time.Now().Before(deadline) {
			throttled := c.throttleFetch(hdr, req, &head, n)
			ok := c.answerFetchSession(req, &head)
			return c.writeFetch(hdr, req, &head, ok && !throttled), nil
		}
		fs.releaseRanges()
		if !c.waitForData(deadline) {
			return c.writeFetch(hdr, req, &head, false), nil
		}
	}
}

// gatherFetch reads every requested partition, holding the ranges in
// c.fetch; it returns the record bytes found and whether any partition
// failed (Kafka answers at once then).
func (c *conn) gatherFetch(req *kproto.FetchRequest) (total int64, failed bool) {
	allowed, refused := 0, 0
	fs := &c.fetch
	fs.parts = resize2(fs.parts, len(req.Topics))
	fs.topics = fs.topics[:0]
	budget := int64(req.MaxBytes)
	if req.Version < 3 {
		budget = 1<<31 - 1
	}
	for i := range req.Topics {
		rt := &req.Topics[i]
		var t *topic
		if req.Version >= 13 {
			t = c.b.cluster.topicByID(rt.TopicID)
		} else {
			t = c.b.cluster.topic(rt.Topic)
		}
		fs.topics = append(fs.topics, t)
		fs.parts[i] = resize2(fs.parts[i], len(rt.Partitions))
		denied := c.fetchDenied(req, rt, t)
		for j := range rt.Partitions {
			fp := &fs.parts[i][j]
			if denied { // refused partitions do not end the long poll (fetchDenied)
				deniedFetch(fp, rt.Partitions[j].Partition)
				refused++
				continue
			}
			allowed++
			c.fetchPartition(req, t, &rt.Partitions[j], fp, total, budget-total)
			total += fp.rng.Len
			// A diverged follower (its tags carry DivergingEpoch) is
			// answered at once too.
			failed = failed || fp.resp.ErrorCode != kproto.CodeNone || fp.resp.Tags != nil || fp.resp.PreferredReadReplica >= 0
		}
	}
	return total, failed || refused > 0 && allowed == 0
}

func resize2[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	return make([]T, n)
}

// fetchPartition fills fp for one requested partition.
func (c *conn) fetchPartition(req *kproto.FetchRequest, t *topic, rp *kproto.FetchPartition, fp *fetchPart, sofar, budget int64) {
	*fp = fetchPart{resp: kproto.FetchPartitionResponse{Partition: rp.Partition, HighWatermark: -1,
		LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1}}
	r := &fp.resp
	switch {
	case t == nil && req.Version >= 13:
		r.ErrorCode = kproto.CodeUnknownTopicID
		return
	case t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.replicas):
		r.ErrorCode = kproto.CodeUnknownTopicOrPartition
		return
	}
	part := readableReplica(req, t, rp.Partition) // the leader's, or a follower's (fetch_replica.go)
	if part == nil {
		r.ErrorCode = kproto.CodeNotLeaderOrFollower
		return
	}
	if code := part.checkLeaderEpoch(rp.CurrentLeaderEpoch); code != kproto.CodeNone {
		r.ErrorCode = code
		return
	}
	follower := req.ReplicaID >= 0
	if follower && (req.ReplicaID == c.b.cfg.BrokerID || !part.isReplica(req.ReplicaID)) {
		// Kafka's Partition.followerReplicaOrThrow.
		r.ErrorCode = kproto.CodeNotLeaderOrFollower
		if rp.CurrentLeaderEpoch != -1 {
			r.ErrorCode = kproto.CodeUnknownLeaderEpoch
		}
		return
	}
	fp.part, fp.follower, fp.isolation = part, follower, req.IsolationLevel
	leo, start := part.log.NextOffset(), part.log.StartOffset()
	lso := part.lastStableOffset()
	hw := part.highWatermark()
	r.HighWatermark, r.LastStableOffset, r.LogStartOffset = hw, min(lso, hw), start
	if req.IsolationLevel == isolationReadCommitted {
		r.AbortedTransactions = []kproto.FetchAbortedTransaction{}
	}
	if follower && req.Version >= 12 {
		if epoch, end, diverged := replica.Diverging(part.epochs, rp.LastFetchedEpoch, rp.FetchOffset, leo); diverged {
			// KIP-320: no records; the follower truncates and fetches again.
			r.Tags = kproto.AppendDivergingEpochTags(nil, epoch, end)
			fp.hw = leo
			return
		}
	}
	if rp.FetchOffset < start || rp.FetchOffset > leo {
		r.ErrorCode = kproto.CodeOffsetOutOfRange
		return
	}
	if id := c.preferredReadReplica(req, part, rp.FetchOffset); id >= 0 {
		r.PreferredReadReplica, fp.hw = id, hw // KIP-392: no records; answered at once
		return
	}
	// Consumers read up to the high watermark (read_committed: the last
	// stable offset), followers to the log end.
	bound := min(hw, part.consumerBound(req.IsolationLevel))
	if follower {
		part.followerFetched(req.ReplicaID, rp.FetchOffset, rp.LogStartOffset, time.Now())
		hw = part.highWatermark()
		r.HighWatermark, r.LastStableOffset = hw, min(part.lastStableOffset(), hw)
		bound = leo
	}
	fp.hw = bound
	limit := min(int64(rp.PartitionMaxBytes), budget)
	if rp.FetchOffset >= bound || limit <= 0 && sofar > 0 || follower && c.leaderThrottle(part, req.ReplicaID, fp) {
		return
	}
	rng, err := part.log.ReadBelow(rp.FetchOffset, int(max(limit, 1)), bound)
	switch {
	case errors.Is(err, segment.ErrOffsetOutOfRange):
		r.ErrorCode = kproto.CodeOffsetOutOfRange
	case errors.Is(err, segment.ErrClosed):
		r.ErrorCode = kproto.CodeNotLeaderOrFollower
	case err != nil:
		c.log.Error("fetch read failed", "topic", part.topic, "partition", part.index, "err", err)
		r.ErrorCode = kproto.CodeKafkaStorageError
	case sofar > 0 && rng.Len > limit:
		rng.Release() // only the first partition with data may exceed the limits
	default:
		fp.rng = rng
		if req.IsolationLevel == isolationReadCommitted && !follower {
			r.AbortedTransactions = part.abortedInRange(rp.FetchOffset, rng.NextOffset)
		}
	}
}

// waitForData parks on every fetched partition until an append, the
// deadline, shutdown or a dead connection. It reports false on shutdown.
func (c *conn) waitForData(deadline time.Time) bool {
	defer c.parked(time.Now())
	fs := &c.fetch
	if fs.wake == nil {
		fs.wake = make(chan struct{}, 1)
	}
	wake := fs.wake
	select {
	case <-wake: // a wake-up that came after the last park ended
	default:
	}
	parked := fs.parked[:0]
	changed := false
	for i := range fs.parts {
		for j := range fs.parts[i] {
			fp := &fs.parts[i][j]
			if fp.part == nil {
				continue
			}
			fp.part.addWaiter(wake)
			parked = append(parked, fp.part)
			// An append between the read and addWaiter must not be missed.
			changed = changed || fp.bound() != fp.hw
		}
	}
	fs.parked = parked
	defer func() {
		for _, p := range parked {
			p.removeWaiter(wake)
		}
		clear(parked) // no partition kept alive by an idle connection
	}()
	if changed {
		return true
	}
	if fs.timer == nil {
		fs.timer = time.NewTimer(time.Until(deadline))
	} else {
		fs.timer.Reset(time.Until(deadline))
	}
	defer fs.timer.Stop()
	select {
	case <-wake:
		return true
	case <-fs.timer.C:
		return true
	case <-c.b.done:
		return false
	case <-c.writerGone:
		return false
	}
}

func (fs *fetchState) releaseRanges() {
	for i := range fs.parts {
		for j := range fs.parts[i] {
			fs.parts[i][j].rng.Release()
			fs.parts[i][j].rng = segment.FileRange{}
		}
	}
}

// writeFetch builds the response from c.fetch (withData) or with every
// partition empty, handing the ranges over to the response.
func (c *conn) writeFetch(hdr *kproto.RequestHeader, req *kproto.FetchRequest, head *kproto.FetchResponseHead, withData bool) *response {
	fs := &c.fetch
	resp := newResponse()
	w := &fs.w
	switch {
	case head.ErrorCode != kproto.CodeNone:
		w.Begin(resp.buf[:0], req.Version, hdr.CorrelationID, head, 0)
	default:
		if !withData {
			fs.releaseRanges()
		}
		w.Begin(resp.buf[:0], req.Version, hdr.CorrelationID, head, fs.answeredTopics(req))
		c.appendFetchTopics(req, withData)
	}
	if err := w.Finish(); err != nil {
		c.log.Error("building fetch response", "err", err) // a bug; the frame is still well-formed
	}
	resp.buf = w.Buf
	resp.holes = append(resp.holes[:0], w.Holes...)
	for i := range fs.parts {
		for j := range fs.parts[i] {
			if fp := &fs.parts[i][j]; withData && fp.rng.Len > 0 {
				resp.ranges = append(resp.ranges, fp.rng)
				c.b.metrics.sent(fp.part.topic, fp.rng.Len)
				if fp.throttled {
					c.b.repl.throttle.leader.Record(fp.rng.Len, time.Now())
				}
			}
			fs.parts[i][j] = fetchPart{}
		}
	}
	w.Buf = nil
	return resp
}

func (c *conn) appendFetchTopics(req *kproto.FetchRequest, withData bool) {
	fs := &c.fetch
	for i := range req.Topics {
		rt := &req.Topics[i]
		n := fs.answered(i, len(rt.Partitions))
		if n == 0 && len(rt.Partitions) > 0 {
			continue
		}
		fs.w.Topic(rt.Topic, rt.TopicID, n)
		for j := range rt.Partitions {
			var fp *fetchPart
			if i < len(fs.parts) && j < len(fs.parts[i]) {
				fp = &fs.parts[i][j]
			}
			if fp != nil && fp.omit {
				continue
			}
			if fp == nil || !withData {
				empty := kproto.FetchPartitionResponse{Partition: rt.Partitions[j].Partition, HighWatermark: -1,
					LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1}
				if fp != nil {
					empty = fp.resp
				}
				fs.w.Partition(&empty, 0)
				continue
			}
			fs.w.Partition(&fp.resp, int(fp.rng.Len))
		}
	}
}
