package broker

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// Produce (key 0), v0-10, kproto's hand-written codec. Advertised from v0
// because librdkafka enables gzip/snappy/lz4 only when v0 is in range;
// the records themselves must be record batches (magic 2) at any version.
//
// Per partition, as Kafka's LogValidator and ProduceRequest.validateRecords:
//   - exactly one batch, magic 2: legacy message sets (magic 0/1) get
//     UNSUPPORTED_FOR_MESSAGE_FORMAT (zkafka does not down-convert or
//     up-convert); zero or several batches get INVALID_RECORD (v8+) or
//     CORRUPT_MESSAGE (older clients, which do not know INVALID_RECORD);
//   - a batch larger than the topic's max.message.bytes: MESSAGE_TOO_LARGE;
//   - CRC-32C mismatch or a malformed batch: CORRUPT_MESSAGE; malformed
//     records: INVALID_RECORD / CORRUPT_MESSAGE. Compressed batches are
//     decompressed to validate (as Kafka does); the stored bytes are the
//     producer's;
//   - idempotent producers: sequence checks (producers.go);
//   - the batch bytes are appended as they came; only base offset, leader
//     epoch and (LogAppendTime topics) max timestamp + CRC are rewritten.
//
// acks: 0 (no response; on any error the connection is closed, as Kafka
// does, so the client notices); 1: answered after the leader's append;
// -1 (all): NOT_ENOUGH_REPLICAS, before anything is appended, when the
// partition's ISR is smaller than min.insync.replicas; after the appends
// of every partition the handler waits (on the goroutine handling the
// connection's requests, which handles nothing else meanwhile, as Kafka
// mutes the channel; the reader reads at most one request ahead of a
// large one, conn_pipeline.go)
// until each partition's high watermark passes its batch, then answers
// NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below
// min.insync.replicas meanwhile, REQUEST_TIMED_OUT at timeout_ms, or
// NOT_LEADER_OR_FOLLOWER if leadership moved (Kafka's DelayedProduce).
// From v10 (KIP-951) a NOT_LEADER_OR_FOLLOWER partition carries the
// leader and epoch this broker knows (CurrentLeader) and the response
// that leader's endpoint (NodeEndpoints), as Kafka 3.7 answers.
// Nothing of the request's bytes is kept across the wait beyond the
// handler's return (they may be a reused mapping, doc.go).
// The internal topic __consumer_offsets is refused with
// INVALID_TOPIC_EXCEPTION, as Kafka's ReplicaManager does for clients;
// control batches (transaction markers) with INVALID_RECORD: only
// coordinators write them (WriteTxnMarkers).
// Transactional produce (partition_txn_produce.go): the transactional id
// must be authorized (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and a batch
// opening a transaction on a partition is verified with the coordinator
// first (KIP-890; INVALID_TXN_STATE when the partition is not in the
// transaction).
// Not implemented: per-record errors (v8 record_errors), throttling.

func init() { regKey(kproto.KeyProduce, 0, kproto.ProduceMaxVersion, handleProduce) }

const codeTransactionalIDAuthorizationFailed kproto.ErrorCode = 53

func handleProduce(c *conn, hdr *kproto.RequestHeader, body []byte) (*response, error) {
	req := &c.produceReq
	if err := req.Decode(hdr.APIVersion, body); err != nil {
		return nil, err
	}
	now := c.b.now()
	resp := &c.produceResp // reused: the response is encoded before the next request
	resp.Topics = resize2(resp.Topics, len(req.Topics))
	c.produceWaits = c.produceWaits[:0]
	failed := false
	txnDenied := c.txnProduceDenied(req)
	var verdicts map[string]map[int32]produceVerdict
	if !txnDenied {
		verdicts = c.verifyProduce(req)
	}
	k := 0 // the partition's place in the request, for c.validated
	for i := range req.Topics {
		rt := &req.Topics[i]
		t := c.b.cluster.topic(rt.Topic)
		out := &resp.Topics[i]
		out.Topic = rt.Topic
		out.Partitions = resize2(out.Partitions, len(rt.Partitions))
		denied := !c.allowedTopic(authz.OpWrite, rt.Topic)
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			pr, w := deniedProduce(rp.Partition), produceWait{}
			switch {
			case txnDenied:
				pr.ErrorCode = codeTransactionalIDAuthorizationFailed
			case !denied:
				c.batchValidated = k < len(c.validated) && c.validated[k]
				pr, w = c.producePartition(req, t, rp, now, verdicts[rt.Topic][rp.Partition])
				c.batchValidated = false
			}
			k++
			failed = failed || pr.ErrorCode != kproto.CodeNone
			out.Partitions[j] = pr
			if req.Acks == -1 && pr.ErrorCode == kproto.CodeNone {
				w.topic, w.index = i, j
				c.produceWaits = append(c.produceWaits, w)
			}
		}
	}
	if len(c.produceWaits) > 0 {
		defer c.parked(time.Now())
		deadline := time.Now().Add(time.Duration(max(req.TimeoutMillis, 0)) * time.Millisecond)
		for _, w := range c.produceWaits {
			if code := w.part.waitCommitted(w.end, w.minISR, deadline, c.b.done); code != kproto.CodeNone {
				pr := &resp.Topics[w.topic].Partitions[w.index]
				pr.ErrorCode = code
			}
		}
	}
	resp.NodeEndpoints = resp.NodeEndpoints[:0]
	if hdr.APIVersion >= 10 {
		c.addLeaderHints(resp)
	}
	// producer_byte_rate and request_percentage (quota_conn.go); acks=0 is
	// exempt from the request quota, as in Kafka.
	resp.ThrottleMillis = clampThrottle(c.throttleBytes(hdr, quotaProduce, int64(c.quota.bytes), req.Acks != 0))
	if req.Acks == 0 {
		if failed {
			return nil, errors.New("produce with acks=0 failed; closing the connection as Kafka does")
		}
		return nil, nil
	}
	return frame(hdr, func(dst []byte) []byte { return resp.AppendTo(dst, hdr.APIVersion) }), nil
}

// addLeaderHints gives every NOT_LEADER_OR_FOLLOWER partition of resp the
// leader and epoch this broker's metadata names, and the response that
// leader's endpoint on the request's listener, so that the client sends
// there without a metadata request (KIP-951, Kafka 3.7's Produce v10).
// No hint when the leader is unknown, this broker, or not live.
func (c *conn) addLeaderHints(resp *kproto.ProduceResponse) {
	for i := range resp.Topics {
		rt := &resp.Topics[i]
		var parts []cachedPartition
		for j := range rt.Partitions {
			pr := &rt.Partitions[j]
			if pr.ErrorCode != kproto.CodeNotLeaderOrFollower {
				continue
			}
			if parts == nil {
				if _, parts, _ = c.b.meta.topic(rt.Topic); parts == nil {
					break
				}
			}
			if int(pr.Partition) >= len(parts) {
				continue
			}
			cp := parts[pr.Partition]
			br, live := c.b.meta.broker(cp.leader)
			if cp.leader < 0 || cp.leader == c.b.cfg.BrokerID || !live {
				continue
			}
			pr.CurrentLeader = &kproto.LeaderHint{LeaderID: cp.leader, LeaderEpoch: cp.leaderEpoch}
			if !slices.ContainsFunc(resp.NodeEndpoints, func(e kproto.NodeEndpoint) bool { return e.NodeID == cp.leader }) {
				host, port := br.at(c.listener)
				resp.NodeEndpoints = append(resp.NodeEndpoints, kproto.NodeEndpoint{NodeID: cp.leader, Host: host, Port: port})
			}
		}
	}
}

// produceWait is an appended batch an acks=all produce waits for: the
// high watermark must reach end.
type produceWait struct {
	topic, index int // in the response
	part         *partition
	end          int64
	minISR       int
}

// producePartition validates and appends one partition's records; w is
// what an acks=all answer waits for.
func (c *conn) producePartition(req *kproto.ProduceRequest, t *topic, rp *kproto.ProducePartition, now time.Time, verdict produceVerdict) (_ kproto.ProducePartitionResponse, w produceWait) {
	out := kproto.ProducePartitionResponse{Partition: rp.Partition, BaseOffset: -1, LogAppendTime: -1, LogStartOffset: -1}
	fail := func(code kproto.ErrorCode, format string, args ...any) (kproto.ProducePartitionResponse, produceWait) {
		out.ErrorCode = code
		if format != "" {
			msg := fmt.Sprintf(format, args...)
			out.ErrorMessage = &msg
		}
		return out, w
	}
	switch {
	case req.Acks != 0 && req.Acks != 1 && req.Acks != -1:
		return fail(kproto.CodeInvalidRequiredAcks, "")
	case t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.replicas):
		return fail(kproto.CodeUnknownTopicOrPartition, "")
	case isInternalTopic(t.name):
		return fail(kproto.CodeInvalidTopicException, "Cannot append to internal topic %s", t.name)
	}
	part := t.partition(rp.Partition)
	if part == nil {
		return fail(kproto.CodeNotLeaderOrFollower, "")
	}
	invalid := kproto.CodeCorruptMessage
	if req.Version >= 8 {
		invalid = kproto.CodeInvalidRecord
	}
	it := kproto.SplitBatches(rp.Records)
	batch, ok := it.Next()
	if !ok {
		if it.Err() != nil {
			return fail(kproto.CodeCorruptMessage, "%v", it.Err())
		}
		return fail(invalid, "Produce requests must have at least one record batch")
	}
	if batch.Magic() < 2 {
		return fail(kproto.CodeUnsupportedForMessageFormat, "message format v%d is not supported; use record batches (magic 2)", batch.Magic())
	}
	if _, more := it.Next(); more || it.Err() != nil {
		return fail(invalid, "Produce requests are only allowed to contain exactly one record batch")
	}
	switch {
	case batch.Control():
		return fail(invalid, "Clients are not allowed to write control records")
	case batch.Transactional() && req.TransactionID == nil:
		return fail(codeTransactionalIDAuthorizationFailed, "a transactional batch needs a transactional id")
	case verdict.code != kproto.CodeNone:
		return fail(verdict.code, "")
	}
	if max := part.cfg.Load().maxMessage; len(batch) > int(max) {
		return fail(kproto.CodeMessageTooLarge, "The batch size %d is larger than max.message.bytes %d", len(batch), max)
	}
	var err error
	if !c.batchValidated { // else done on the reader (conn_pipeline.go)
		c.scratch, err = kproto.ValidateBatch(batch, c.scratch[:0])
	}
	if cap(c.scratch) > 16<<20 {
		c.scratch = nil
	}
	if err != nil {
		if errors.Is(err, kproto.ErrInvalidRecord) {
			return fail(invalid, "%v", err)
		}
		return fail(kproto.CodeCorruptMessage, "%v", err)
	}
	minISR := 0 // only acks=all needs it (and reading it allocates)
	if req.Acks == -1 {
		minISR = c.b.minInsyncReplicas(t)
	}
	if n := part.isrSize(); req.Acks == -1 && n < minISR {
		return fail(kproto.CodeNotEnoughReplicas, "The size of the current ISR %d is insufficient to satisfy the min.isr requirement of %d for partition %s-%d", n, minISR, t.name, rp.Partition)
	}
	if part.cfg.Load().compaction.compact {
		var keyless bool
		if keyless, c.scratch = keylessRecord(batch, c.scratch); keyless {
			return fail(invalid, "Compacted topic cannot accept message without key in topic partition %s-%d.", t.name, rp.Partition)
		}
	}
	before := part.log.NextOffset() // a retried duplicate answers an offset below it
	res := part.appendChecked(batch, now, txnCheck{verify: req.TransactionID != nil && c.b.txnVerification(), guard: verdict.guard})
	if res.code != kproto.CodeNone {
		if res.msg != "" {
			return fail(res.code, "%s", res.msg)
		}
		return fail(res.code, "")
	}
	if res.baseOffset >= before {
		c.b.metrics.appended(part.topic, int(batch.NumRecords()), len(batch))
	}
	out.BaseOffset, out.LogAppendTime, out.LogStartOffset = res.baseOffset, res.logAppendTime, part.log.StartOffset()
	w = produceWait{part: part, end: res.baseOffset + int64(batch.LastOffsetDelta()) + 1, minISR: minISR}
	return out, w
}
