package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// OffsetDelete (key 47), v0, via kmsg.
//
// Deletes committed offsets (their znodes in one multi). Group errors:
// empty id INVALID_GROUP_ID, unknown GROUP_ID_NOT_FOUND. Per partition:
// unknown topic UNKNOWN_TOPIC_OR_PARTITION; a topic that a member of a
// non-empty "consumer" group subscribes to GROUP_SUBSCRIBED_TO_TOPIC.
// A non-empty group of another protocol type is NON_EMPTY_GROUP.

func init() { regKey(kproto.KeyOffsetDelete, 0, 0, groupHandler(handleOffsetDelete)) }

func handleOffsetDelete(r groupRequest, req *kmsg.OffsetDeleteRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	b := r.c.b
	if !r.c.allowedGroup(authz.OpDelete, req.Group) {
		resp.ErrorCode = ec(kproto.CodeGroupAuthorizationFailed)
		return resp
	}
	if req.Group == "" {
		resp.ErrorCode = ec(kproto.CodeInvalidGroupID)
		return resp
	}
	g, code := b.groups.lookup(req.Group, false)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	if g == nil {
		resp.ErrorCode = ec(kproto.CodeGroupIDNotFound)
		return resp
	}
	g.mu.Lock()
	if g.state == groupDead {
		g.mu.Unlock()
		resp.ErrorCode = ec(kproto.CodeGroupIDNotFound)
		return resp
	}
	var subscribed map[string]bool
	if len(g.members) > 0 {
		var ok bool
		if subscribed, ok = g.subscribedTopicsLocked(); !ok {
			g.mu.Unlock()
			resp.ErrorCode = ec(kproto.CodeNonEmptyGroup)
			return resp
		}
	}
	g.mu.Unlock()
	var del []topicPartition
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		known := b.cluster.topic(t.Topic) != nil
		readable := r.c.allowedTopic(authz.OpRead, t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case !readable:
				rp.ErrorCode = ec(kproto.CodeTopicAuthorizationFailed)
			case !known:
				rp.ErrorCode = ec(kproto.CodeUnknownTopicOrPartition)
			case subscribed[t.Topic]:
				rp.ErrorCode = codeGroupSubscribedToTopic
			default:
				del = append(del, topicPartition{t.Topic, p.Partition})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(del) > 0 {
		if err := g.deleteOffsets(del); err != nil {
			b.log.Warn("deleting offsets", "group", req.Group, "err", err)
			resp.ErrorCode = ec(kproto.CodeCoordinatorNotAvailable)
			resp.Topics = nil
		}
	}
	return resp
}
