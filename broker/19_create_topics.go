package broker

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// CreateTopics (key 19), v0-7, via kmsg.
//
// Names are validated as Kafka's Topic.validate ([a-zA-Z0-9._-], at most
// 249 characters, not "." or "..", no '.'/'_' collision with an existing
// topic): INVALID_TOPIC_EXCEPTION. num_partitions/replication_factor -1
// take num.partitions/default.replication.factor (v4+); a replication
// factor above the number of live brokers is INVALID_REPLICATION_FACTOR;
// manual assignments are checked (INVALID_REPLICA_ASSIGNMENT); configs are
// validated (INVALID_CONFIG, see topicconfig.go). validate_only checks
// everything and creates nothing. Duplicate names in one request get
// INVALID_REQUEST. v5+ returns the topic id (v7), partition count,
// replication factor and configs of the new topic. With timeout_ms > 0 the
// answer waits until this broker's metadata cache knows the new topic's
// leaders (the controller's UpdateMetadata), as Kafka's, so that a client
// can use the topic at once; REQUEST_TIMED_OUT if that takes longer.

func init() { regKey(kproto.KeyCreateTopics, 0, 7, kmsgHandler(handleCreateTopics)) }

func handleCreateTopics(c *conn, req *kmsg.CreateTopicsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := map[string]int{}
	for _, rt := range req.Topics {
		seen[rt.Topic]++
	}
	for _, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		st.NumPartitions, st.ReplicationFactor = -1, -1
		if seen[rt.Topic] > 1 {
			msg := "Create topics request from client contains duplicate topic names."
			st.ErrorCode, st.ErrorMessage = int16(kproto.CodeInvalidRequest), &msg
			c.hideCreatedConfigs(&st)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if !c.allowedCluster(authz.OpCreate) && !c.allowedTopic(authz.OpCreate, rt.Topic) {
			resp.Topics = append(resp.Topics, c.deniedTopicCreation(st))
			continue
		}
		spec := topicSpec{name: rt.Topic, partitions: rt.NumPartitions, rf: rt.ReplicationFactor, configs: map[string]string{}}
		for _, a := range rt.ReplicaAssignment {
			for int(a.Partition) >= len(spec.assignment) {
				spec.assignment = append(spec.assignment, nil)
			}
			spec.assignment[a.Partition] = a.Replicas
		}
		for _, cfg := range rt.Configs {
			if cfg.Value != nil {
				spec.configs[cfg.Name] = *cfg.Value
			}
		}
		t, err := c.b.createTopic(spec, req.ValidateOnly)
		code, msg := codeOf(err)
		st.ErrorCode, st.ErrorMessage = int16(code), msg
		if err == nil {
			fillCreatedTopic(c.b, &st, t, spec)
			c.hideCreatedConfigs(&st)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if !req.ValidateOnly {
		for i := range resp.Topics {
			if st := &resp.Topics[i]; st.ErrorCode == 0 && seen[st.Topic] == 1 {
				st.ErrorCode = c.b.awaitMetadata(req.TimeoutMillis, st.Topic, int(st.NumPartitions))
			}
		}
	}
	return resp, nil
}

// awaitMetadata waits, up to timeoutMillis (none when <= 0), until this
// broker's metadata cache has the topic's n partitions with leaders, as
// Kafka answers CreateTopics only then (REQUEST_TIMED_OUT if it is late).
func (b *Broker) awaitMetadata(timeoutMillis int32, name string, n int) int16 {
	if timeoutMillis <= 0 || n <= 0 {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeoutMillis)*time.Millisecond)
	defer cancel()
	if !b.meta.waitFor(ctx, b.done, func() bool { return b.meta.hasLeaders(name, n) }) {
		return int16(kproto.CodeRequestTimedOut)
	}
	return 0
}

// fillCreatedTopic fills the v5+ fields of a successful creation.
func fillCreatedTopic(b *Broker, st *kmsg.CreateTopicsResponseTopic, t *topic, spec topicSpec) {
	if t != nil {
		st.TopicID = t.id
		st.NumPartitions = int32(len(t.replicas))
		st.ReplicationFactor = int16(len(t.replicas[0]))
	} else { // validate_only
		st.NumPartitions, st.ReplicationFactor = spec.partitions, spec.rf
		if spec.partitions == -1 {
			st.NumPartitions = b.cfg.NumPartitions
		}
		if spec.rf == -1 {
			st.ReplicationFactor = b.cfg.DefaultReplicationFactor
		}
	}
	for _, e := range describeTopicConfig(b.topicDefaults(), spec.configs) {
		cfg := kmsg.NewCreateTopicsResponseTopicConfig()
		cfg.Name, cfg.Source = e.name, e.source
		v := e.value
		cfg.Value = &v
		st.Configs = append(st.Configs, cfg)
	}
}
