package broker

import (
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// Metadata (key 3), v0-12, kproto's hand-written codec.
//
//   - brokers: the live brokers of /brokers/ids with their advertised
//     host and port; no racks;
//   - cluster id (v2+) from /cluster/id, controller id (v1+) from
//     /controller (-1 while there is none);
//   - topics: all topics when the request asks for all (null list from v1,
//     empty list in v0); topic ids from v10, lookup by id from v10 with a
//     null name; a partition whose leader is not live is reported with
//     LEADER_NOT_AVAILABLE and leader -1;
//   - auto-creation: an unknown topic is created with num.partitions and
//     default.replication.factor when auto.create.topics.enable is set
//     and the request allows it (always before v4); an invalid name gets
//     INVALID_TOPIC_EXCEPTION, as Kafka;
//   - authorization (authorize_apis.go): the topics the principal may not
//     DESCRIBE are left out of an all-topics answer, and answer
//     TOPIC_AUTHORIZATION_FAILED when named; auto-creation needs CREATE on
//     the cluster or the topic (else TOPIC_AUTHORIZATION_FAILED);
//   - authorized operations (v8+): the bit fields when asked for, else
//     -2147483648.

func init() { regKey(kproto.KeyMetadata, 0, kproto.MetadataMaxVersion, handleMetadata) }

const authorizedOpsUnknown = -2147483648

func handleMetadata(c *conn, hdr *kproto.RequestHeader, body []byte) (*response, error) {
	req := &c.metaReq
	if err := req.Decode(hdr.APIVersion, body); err != nil {
		return nil, err
	}
	b := c.b
	resp := kproto.MetadataResponse{ControllerID: b.cluster.controllerID(), ClusterAuthorizedOperations: authorizedOpsUnknown}
	cid := b.clusterID
	resp.ClusterID = &cid
	for _, br := range b.cluster.liveBrokers() {
		host, port := br.at(c.listener)
		resp.Brokers = append(resp.Brokers, kproto.MetadataBroker{NodeID: br.id, Host: host, Port: port})
	}
	if req.AllTopics() {
		for _, t := range b.cluster.allTopics() {
			if c.allowedTopic(authz.OpDescribe, t.name) {
				resp.Topics = append(resp.Topics, b.metadataTopic(t))
			}
		}
	} else {
		for i := range req.Topics {
			resp.Topics = append(resp.Topics, c.metadataAuthorized(&req.Topics[i], req))
		}
	}
	c.setAuthorizedOperations(req, &resp)
	return frame(hdr, func(dst []byte) []byte { return resp.AppendTo(dst, hdr.APIVersion) }), nil
}

// metadataFor answers one requested topic, by name or (v10+) by id.
func (b *Broker) metadataFor(rt *kproto.MetadataRequestTopic, req *kproto.MetadataRequest) kproto.MetadataTopic {
	if rt.Topic == nil {
		if t := b.cluster.topicByID(rt.TopicID); t != nil {
			return b.metadataTopic(t)
		}
		return kproto.MetadataTopic{ErrorCode: kproto.CodeUnknownTopicID, TopicID: rt.TopicID, AuthorizedOperations: authorizedOpsUnknown}
	}
	name := *rt.Topic
	if t := b.cluster.topic(name); t != nil {
		return b.metadataTopic(t)
	}
	out := kproto.MetadataTopic{Topic: rt.Topic, ErrorCode: kproto.CodeUnknownTopicOrPartition, AuthorizedOperations: authorizedOpsUnknown}
	if !b.cfg.AutoCreateTopics || !req.AllowAutoTopicCreation {
		return out
	}
	if err := validateTopicName(name); err != nil {
		out.ErrorCode = kproto.CodeInvalidTopicException
		return out
	}
	t, err := b.createTopic(topicSpec{name: name, partitions: -1, rf: -1}, false)
	if err != nil {
		code, _ := codeOf(err)
		if code == kproto.CodeTopicAlreadyExists {
			if t := b.cluster.topic(name); t != nil {
				return b.metadataTopic(t)
			}
		}
		b.log.Warn("auto-creating topic", "topic", name, "err", err)
		out.ErrorCode = kproto.CodeLeaderNotAvailable
		if code == kproto.CodeInvalidReplicationFactor || code == kproto.CodeInvalidTopicException {
			out.ErrorCode = code
		}
		return out
	}
	if t == nil {
		out.ErrorCode = kproto.CodeLeaderNotAvailable
		return out
	}
	return b.metadataTopic(t)
}

func (b *Broker) metadataTopic(t *topic) kproto.MetadataTopic {
	name := t.name
	out := kproto.MetadataTopic{Topic: &name, TopicID: t.id, AuthorizedOperations: authorizedOpsUnknown}
	out.Partitions = make([]kproto.MetadataPartition, len(t.replicas))
	for p := range t.replicas {
		mp := kproto.MetadataPartition{
			Partition: int32(p), Leader: t.leaders[p], LeaderEpoch: t.leaderEpochs[p],
			Replicas: t.replicas[p], ISR: t.isr[p], OfflineReplicas: []int32{},
		}
		if mp.ISR == nil {
			mp.ISR = []int32{}
		}
		if mp.Leader < 0 || !b.cluster.isLive(mp.Leader) {
			mp.ErrorCode, mp.Leader = kproto.CodeLeaderNotAvailable, -1
		}
		for _, r := range t.replicas[p] {
			if !b.cluster.isLive(r) {
				mp.OfflineReplicas = append(mp.OfflineReplicas, r)
			}
		}
		out.Partitions[p] = mp
	}
	return out
}
