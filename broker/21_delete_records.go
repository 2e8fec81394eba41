package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// DeleteRecords (key 21), v0-2, via kmsg, as Kafka 3.7 answers it: for
// each partition this broker leads, the log start offset moves to the
// offset asked (-1: the high watermark), and the answer waits, up to
// timeout_ms, until every replica on a live broker has moved its own
// start too; low_watermark is then the smallest of them
// (delete_records.go). Per partition: TOPIC_AUTHORIZATION_FAILED without
// DELETE on the topic, UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
// POLICY_VIOLATION on a topic whose cleanup.policy lacks "delete",
// OFFSET_OUT_OF_RANGE below 0 or above the high watermark,
// REQUEST_TIMED_OUT when the followers did not follow in time.

func init() { regKey(kproto.KeyDeleteRecords, 0, 2, kmsgHandler(handleDeleteRecords)) }

func handleDeleteRecords(c *conn, req *kmsg.DeleteRecordsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	type pending struct {
		out    *kmsg.DeleteRecordsResponseTopicPartition
		part   *partition
		offset int64
	}
	var waits []pending
	for _, rt := range req.Topics {
		out := kmsg.NewDeleteRecordsResponseTopic()
		out.Topic = rt.Topic
		out.Partitions = make([]kmsg.DeleteRecordsResponseTopicPartition, len(rt.Partitions))
		allowed := c.allowedTopic(authz.OpDelete, rt.Topic)
		t := c.b.cluster.topic(rt.Topic)
		for i, rp := range rt.Partitions {
			op := &out.Partitions[i]
			*op = kmsg.NewDeleteRecordsResponseTopicPartition()
			op.Partition, op.LowWatermark = rp.Partition, -1
			part, code := deleteRecordsTarget(allowed, t, rp.Partition)
			if code == kproto.CodeNone {
				var off int64
				var err error
				if off, code, err = part.deleteRecords(rp.Offset); err != nil {
					c.log.Error("delete records", "topic", rt.Topic, "partition", rp.Partition, "err", err)
				}
				if code == kproto.CodeNone {
					waits = append(waits, pending{op, part, off})
				}
			}
			op.ErrorCode = int16(code)
		}
		resp.Topics = append(resp.Topics, out)
	}
	deadline := time.Now().Add(time.Duration(max(req.TimeoutMillis, 0)) * time.Millisecond)
	for _, w := range waits {
		low, code := w.part.waitLowWatermark(w.offset, c.b.cluster.isLive, deadline, c.b.done)
		w.out.LowWatermark, w.out.ErrorCode = low, int16(code)
	}
	return resp, nil
}

// deleteRecordsTarget is the led partition a DeleteRecords names, or the
// error to answer.
func deleteRecordsTarget(allowed bool, t *topic, index int32) (*partition, kproto.ErrorCode) {
	switch {
	case !allowed:
		return nil, kproto.CodeTopicAuthorizationFailed
	case t == nil || index < 0 || int(index) >= len(t.replicas):
		return nil, kproto.CodeUnknownTopicOrPartition
	}
	if part := t.partition(index); part != nil {
		return part, kproto.CodeNone
	}
	return nil, kproto.CodeNotLeaderOrFollower
}
