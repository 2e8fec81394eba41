package broker

import (
	"errors"

	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// ListOffsets (key 2), v0-7, kproto's hand-written codec.
//
//   - timestamp -1 (latest): the high watermark; the last stable offset
//     for READ_COMMITTED (isolation level 1, v2+); -2 (earliest): the log
//     start offset;
//   - -3 (max timestamp, v7): the offset and timestamp of the batch with
//     the largest max timestamp; found by reading batch headers, so it
//     costs a scan of the log's headers (rarely used: kafka-get-offsets);
//   - a timestamp >= 0: the first record whose timestamp is >= it, found
//     with the time index, then within the batch by reading its records;
//     none: offset -1 and timestamp -1, as Kafka;
//   - v0 (max_num_offsets): at most one offset is returned;
//   - leader epoch (v4+) is always 0.
// Errors per partition: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
// KAFKA_STORAGE_ERROR.

func init() { regKey(kproto.KeyListOffsets, 0, kproto.ListOffsetsMaxVersion, handleListOffsets) }

func handleListOffsets(c *conn, hdr *kproto.RequestHeader, body []byte) (*response, error) {
	req := &c.listReq
	if err := req.Decode(hdr.APIVersion, body); err != nil {
		return nil, err
	}
	var resp kproto.ListOffsetsResponse
	resp.Topics = make([]kproto.ListOffsetsTopicResponse, len(req.Topics))
	for i := range req.Topics {
		rt := &req.Topics[i]
		t := c.b.cluster.topic(rt.Topic)
		out := &resp.Topics[i]
		out.Topic = rt.Topic
		out.Partitions = make([]kproto.ListOffsetsPartitionResponse, len(rt.Partitions))
		denied := !c.allowedTopic(authz.OpDescribe, rt.Topic)
		for j := range rt.Partitions {
			if denied {
				out.Partitions[j] = deniedListOffset(rt.Partitions[j].Partition)
				continue
			}
			out.Partitions[j] = c.listOffset(req, t, &rt.Partitions[j])
		}
	}
	return frame(hdr, func(dst []byte) []byte { return resp.AppendTo(dst, hdr.APIVersion) }), nil
}

func (c *conn) listOffset(req *kproto.ListOffsetsRequest, t *topic, rp *kproto.ListOffsetsPartition) kproto.ListOffsetsPartitionResponse {
	out := kproto.ListOffsetsPartitionResponse{Partition: rp.Partition, Timestamp: -1, Offset: -1, LeaderEpoch: -1}
	if t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.replicas) {
		out.ErrorCode = kproto.CodeUnknownTopicOrPartition
		return out
	}
	part := t.partition(rp.Partition)
	if part == nil {
		out.ErrorCode = kproto.CodeNotLeaderOrFollower
		return out
	}
	if code := part.checkLeaderEpoch(rp.CurrentLeaderEpoch); code != kproto.CodeNone {
		out.ErrorCode = code
		return out
	}
	out.LeaderEpoch = part.leaderEpoch.Load()
	var err error
	switch rp.Timestamp {
	case -1:
		out.Offset = part.consumerBound(req.IsolationLevel)
		if req.ReplicaID >= 0 {
			out.Offset = part.log.NextOffset() // a follower's (or a debugging) request: the log end, as Kafka
		}
	case -2:
		out.Offset = part.log.StartOffset()
	case -3:
		out.Offset, out.Timestamp, err = maxTimestampOffset(part)
	default:
		out.Offset, out.Timestamp, err = offsetForTime(part, rp.Timestamp)
	}
	if err != nil {
		c.log.Error("list offsets", "topic", part.topic, "partition", part.index, "err", err)
		out.ErrorCode, out.Offset, out.Timestamp = kproto.CodeKafkaStorageError, -1, -1
	}
	if req.Version == 0 && out.Offset >= 0 && rp.MaxNumOffsets > 0 {
		out.OldOffsets = []int64{out.Offset}
	}
	return out
}

// offsetForTime finds the first record with a timestamp >= ts.
func offsetForTime(p *partition, ts int64) (int64, int64, error) {
	for {
		off, err := p.log.OffsetForTime(ts)
		if err != nil || off >= p.highWatermark() {
			return -1, -1, err
		}
		batch, err := p.log.ReadBatches(off, 1, nil)
		if errors.Is(err, segment.ErrOffsetOutOfRange) {
			continue // retention moved the start; look again
		}
		if err != nil {
			return -1, -1, err
		}
		return recordAtOrAfter(kproto.Batch(batch), ts)
	}
}

// recordAtOrAfter returns the offset and timestamp of the first record of
// b with a timestamp >= ts (b's max timestamp is >= ts).
func recordAtOrAfter(b kproto.Batch, ts int64) (int64, int64, error) {
	if len(b) < kproto.BatchHeaderSize {
		return -1, -1, errors.New("short batch")
	}
	if b.LogAppendTime() {
		return b.BaseOffset(), b.MaxTimestamp(), nil
	}
	it, err := kproto.Records(b, nil)
	if err != nil {
		return -1, -1, err
	}
	for {
		r, ok := it.Next()
		if !ok {
			break
		}
		if rts := b.FirstTimestamp() + r.TimestampDelta; rts >= ts {
			return b.BaseOffset() + int64(r.OffsetDelta), rts, nil
		}
	}
	return b.LastOffset(), b.MaxTimestamp(), it.Err()
}

// maxTimestampOffset scans the batch headers for the largest max
// timestamp (ListOffsets -3).
func maxTimestampOffset(p *partition) (int64, int64, error) {
	var h [kproto.BatchHeaderSize]byte
	bestOff, bestTs := int64(-1), int64(-1)
	for off := p.log.StartOffset(); off < p.highWatermark(); {
		r, err := p.log.Read(off, 4<<20)
		if err != nil {
			return -1, -1, err
		}
		for pos := int64(0); pos < r.Len; {
			if _, err := r.ReadAt(h[:], pos); err != nil {
				r.Release()
				return -1, -1, err
			}
			b := kproto.Batch(h[:])
			if b.MaxTimestamp() > bestTs {
				bestOff, bestTs = b.LastOffset(), b.MaxTimestamp()
			}
			pos += int64(b.BatchLength()) + 12
		}
		next := r.NextOffset
		r.Release()
		if next <= off {
			break
		}
		off = next
	}
	return bestOff, bestTs, nil
}
