package broker

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// DescribeTopicPartitions (key 75), v0, via kmsg, as Kafka 3.7's
// DescribeTopicPartitionsRequestHandler (KIP-966; a Kafka 3.7 broker in
// ZooKeeper mode does not serve it, only a KRaft one): the topics asked
// (none: every topic), sorted by name, from the cursor on, with at most
// min(response_partition_limit, max.request.partition.size.limit = 2000)
// partitions in all; next_cursor names the first partition left out.
// A partition is as Metadata answers it (LEADER_NOT_AVAILABLE without a
// live leader); eligible leader replicas are empty (no KIP-966 ELR in
// ZooKeeper mode). Topics asked by name that are unknown are
// UNKNOWN_TOPIC_OR_PARTITION, those not authorized for DESCRIBE
// TOPIC_AUTHORIZATION_FAILED (with no id); when listing every topic the
// unauthorized ones are left out. A cursor on a topic not in the list, or
// with a negative partition, is INVALID_REQUEST.

func init() {
	regKey(kproto.KeyDescribeTopicPartitions, 0, 0, kmsgHandler(handleDescribeTopicPartitions))
}

// maxRequestPartitionSizeLimit is Kafka's max.request.partition.size.limit.
const maxRequestPartitionSizeLimit = 2000

func handleDescribeTopicPartitions(c *conn, req *kmsg.DescribeTopicPartitionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeTopicPartitionsResponse)
	all := len(req.Topics) == 0
	cursorTopic, cursorPart := "", int32(0)
	if req.Cursor != nil {
		cursorTopic, cursorPart = req.Cursor.Topic, req.Cursor.Partition
	}
	var names []string
	if all {
		names = c.b.meta.topicNames()
	} else {
		for _, t := range req.Topics {
			names = append(names, t.Topic)
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n < cursorTopic })
	if req.Cursor != nil && (cursorPart < 0 || (!all && !slices.Contains(names, cursorTopic))) {
		for _, t := range req.Topics { // Kafka's error response: every topic asked
			resp.Topics = append(resp.Topics, describeTopicError(t.Topic, kproto.CodeInvalidRequest))
		}
		return resp, nil
	}
	limit := max(min(int(req.ResponsePartitionLimit), maxRequestPartitionSizeLimit), 1)
	var denied []kmsg.DescribeTopicPartitionsResponseTopic
	for _, name := range names {
		if !c.allowedTopic(authz.OpDescribe, name) {
			if !all {
				denied = append(denied, describeTopicError(name, kproto.CodeTopicAuthorizationFailed))
			}
			continue
		}
		if limit == 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name}
			break
		}
		mt, ok := c.b.metadataTopic(name)
		if !ok {
			if !all {
				resp.Topics = append(resp.Topics, describeTopicError(name, kproto.CodeUnknownTopicOrPartition))
			}
			continue
		}
		from := int32(0)
		if name == cursorTopic {
			from = cursorPart
		}
		rt := describedTopic(c, name, mt, from, limit)
		limit -= len(rt.Partitions)
		resp.Topics = append(resp.Topics, rt)
		if next := from + int32(len(rt.Partitions)); int(next) < len(mt.Partitions) {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: next}
			break
		}
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp, nil
}

// describedTopic is topic name's partitions from index from on, at most
// limit of them.
func describedTopic(c *conn, name string, mt kproto.MetadataTopic, from int32, limit int) kmsg.DescribeTopicPartitionsResponseTopic {
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	rt.Topic, rt.TopicID = kmsg.StringPtr(name), mt.TopicID
	rt.IsInternal = isInternalTopic(name)
	rt.AuthorizedOperations = c.authorizedOperations(authz.ResourceTopic, name)
	for _, mp := range mt.Partitions {
		if mp.Partition < from || len(rt.Partitions) == limit {
			continue
		}
		rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
		rp.ErrorCode, rp.Partition, rp.LeaderID, rp.LeaderEpoch = int16(mp.ErrorCode), mp.Partition, mp.Leader, mp.LeaderEpoch
		rp.Replicas, rp.ISR, rp.OfflineReplicas = mp.Replicas, mp.ISR, mp.OfflineReplicas
		rp.EligibleLeaderReplicas, rp.LastKnownELR = []int32{}, []int32{}
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

func describeTopicError(name string, code kproto.ErrorCode) kmsg.DescribeTopicPartitionsResponseTopic {
	rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
	rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), int16(code)
	return rt
}

// isInternalTopic is Kafka's Topic.isInternal: the two internal topics.
func isInternalTopic(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state"
}
