package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// OffsetForLeaderEpoch (key 23), v0-4, via kmsg.
//
// The answer comes from the partition's leader epoch cache
// (leader-epoch-checkpoint, broker/replica): the largest epoch at or
// below the requested one and where the next one starts (the log end for
// the current epoch), or UNDEFINED (-1, -1). A current_leader_epoch (v2+)
// below the partition's gets FENCED_LEADER_EPOCH, above it
// UNKNOWN_LEADER_EPOCH. Consumers use this after a leader change to
// detect truncation. Errors: UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER.

func init() { regKey(kproto.KeyOffsetForLeaderEpoch, 0, 4, kmsgHandler(handleOffsetForLeaderEpoch)) }

func handleOffsetForLeaderEpoch(c *conn, req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, rt := range req.Topics {
		t := c.b.cluster.topic(rt.Topic)
		denied := c.epochsDenied(rt.Topic)
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
			part := t.partition(rp.Partition)
			switch {
			case denied:
				sp.ErrorCode = int16(kproto.CodeTopicAuthorizationFailed)
			case t == nil || rp.Partition < 0 || int(rp.Partition) >= len(t.replicas):
				sp.ErrorCode = int16(kproto.CodeUnknownTopicOrPartition)
			case part == nil:
				sp.ErrorCode = int16(kproto.CodeNotLeaderOrFollower)
			case part.checkLeaderEpoch(rp.CurrentLeaderEpoch) != kproto.CodeNone:
				sp.ErrorCode = int16(part.checkLeaderEpoch(rp.CurrentLeaderEpoch))
			default:
				// The latest epoch ends at the log end offset, as in Kafka.
				sp.LeaderEpoch, sp.EndOffset = part.epochs.EndOffsetFor(rp.LeaderEpoch, part.log.NextOffset())
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
