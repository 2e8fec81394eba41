package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// OffsetForLeaderEpoch (key 23), v0-4, via kmsg.
//
// zkafka partitions have a single leader epoch, 0, for their whole
// history. So for a requested epoch of 0 (or any epoch >= 0 that the
// client saw: there is no other) the end offset is the log end offset and
// the leader epoch 0; a current_leader_epoch (v2+) other than 0 or -1 gets
// FENCED_LEADER_EPOCH (below) or UNKNOWN_LEADER_EPOCH (above). Consumers
// use this after a leader change to detect truncation; here there is never
// any. Errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER.

func init() { regKey(kproto.KeyOffsetForLeaderEpoch, 0, 4, kmsgHandler(handleOffsetForLeaderEpoch)) }

func handleOffsetForLeaderEpoch(c *conn, req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, rt := range req.Topics {
		t := c.b.cluster.topic(rt.Topic)
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
			part := t.partition(rp.Partition)
			switch {
			case t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.replicas):
				sp.ErrorCode = int16(kproto.CodeUnknownTopicOrPartition)
			case part == nil:
				sp.ErrorCode = int16(kproto.CodeNotLeaderOrFollower)
			case rp.CurrentLeaderEpoch > 0:
				sp.ErrorCode = int16(kproto.CodeUnknownLeaderEpoch)
			case rp.CurrentLeaderEpoch < -1:
				sp.ErrorCode = int16(kproto.CodeFencedLeaderEpoch)
			case rp.LeaderEpoch < 0:
				// An epoch before any leader: Kafka answers UNDEFINED (-1, -1).
			default:
				sp.LeaderEpoch, sp.EndOffset = 0, part.highWatermark()
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
