package broker

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// DeleteTopics (key 20), v0-6, via kmsg.
//
// As Kafka in ZooKeeper mode: the topic is marked in
// /admin/delete_topics/{topic}; the controller deletes /brokers/topics/{t}
// (with its partition states), /config/topics/{t} and the mark, and every
// broker deletes its partition directories when the topic leaves
// /brokers/topics. When this broker is the controller that happens before
// the response; otherwise the response waits for it up to timeout_ms
// (REQUEST_TIMED_OUT after), and then until this broker's metadata cache
// has dropped the topic (the controller's UpdateMetadata), as Kafka's
// DelayedDeleteTopics. Unknown topics: UNKNOWN_TOPIC_OR_PARTITION;
// by id (v6): UNKNOWN_TOPIC_ID; delete.topic.enable=false:
// TOPIC_DELETION_DISABLED.

func init() { regKey(kproto.KeyDeleteTopics, 0, 6, kmsgHandler(handleDeleteTopics)) }

func handleDeleteTopics(c *conn, req *kmsg.DeleteTopicsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	timeout := time.Duration(max(req.TimeoutMillis, 1000)) * time.Millisecond
	names := req.TopicNames
	ids := make([][16]byte, len(names))
	if req.Version >= 6 {
		names, ids = nil, nil
		for _, t := range req.Topics {
			if t.Topic != nil {
				names = append(names, *t.Topic)
				ids = append(ids, [16]byte{})
			} else {
				names = append(names, "")
				ids = append(ids, t.TopicID)
			}
		}
	}
	for i, name := range names {
		st := kmsg.NewDeleteTopicsResponseTopic()
		if name == "" && ids[i] != ([16]byte{}) {
			st.TopicID = ids[i]
			t := c.b.cluster.topicByID(ids[i])
			if t == nil {
				st.ErrorCode = int16(kproto.CodeUnknownTopicID)
				resp.Topics = append(resp.Topics, st)
				continue
			}
			name = t.name
		}
		if c.topicDeletionDenied(&st, name) {
			resp.Topics = append(resp.Topics, st)
			continue
		}
		n := name
		st.Topic = &n
		if t := c.b.cluster.topic(name); t != nil {
			st.TopicID = t.id
		}
		code, msg := codeOf(c.b.deleteTopic(name, timeout))
		st.ErrorCode, st.ErrorMessage = int16(code), msg
		if code == 0 {
			st.ErrorCode = c.b.awaitGone(timeout, name)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// awaitGone waits up to timeout until this broker's metadata cache no
// longer has topic name (REQUEST_TIMED_OUT if it still has).
func (b *Broker) awaitGone(timeout time.Duration, name string) int16 {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if !b.meta.waitFor(ctx, b.done, func() bool { _, _, ok := b.meta.topic(name); return !ok }) {
		return int16(kproto.CodeRequestTimedOut)
	}
	return 0
}
