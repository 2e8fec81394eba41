package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// CreatePartitions (key 37), v0-3, via kmsg.
//
// Grows a topic: the new partitions are added to /brokers/topics/{t} with
// a versioned write (Kafka's AdminZkClient.addPartitions) and the
// controller writes their states. Errors: UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_PARTITIONS (count not above the current one),
// INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR; duplicate topics
// in one request: INVALID_REQUEST. validate_only creates nothing.

func init() { regKey(kproto.KeyCreatePartitions, 0, 3, kmsgHandler(handleCreatePartitions)) }

func handleCreatePartitions(c *conn, req *kmsg.CreatePartitionsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		var err error
		if seen[rt.Topic] > 1 {
			err = adminErr(kproto.CodeInvalidRequest, "Duplicate topic in request.")
		} else if !c.allowedTopic(authz.OpAlter, rt.Topic) {
			err = adminErr(kproto.CodeTopicAuthorizationFailed, "The topic authorization is failed.")
		} else {
			var assignment [][]int32
			for _, a := range rt.Assignment {
				assignment = append(assignment, a.Replicas)
			}
			err = c.b.createPartitions(rt.Topic, rt.Count, assignment, req.ValidateOnly)
		}
		code, msg := codeOf(err)
		st.ErrorCode, st.ErrorMessage = int16(code), msg
		if err == nil && !req.ValidateOnly {
			st.ErrorCode = c.b.awaitMetadata(req.TimeoutMillis, rt.Topic, int(rt.Count))
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
