package broker

import (
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// Metadata (key 3), v0-12, kproto's hand-written codec. It answers from
// the metadata cache that the controller's UpdateMetadata requests fill
// (metadata_cache.go), as a Kafka broker does, so every broker tells the
// controller's view:
//
//   - brokers: the live brokers with their host and port on the
//     listener the request came on, and their broker.rack (v1+; null
//     for none);
//   - cluster id (v2+) from /cluster/id, controller id (v1+) the
//     UpdateMetadata's sender (-1 before the first one);
//   - topics: all topics when the request asks for all (null list from v1,
//     empty list in v0); topic ids from v10, lookup by id from v10 with a
//     null name; each partition's replicas, ISR, offline replicas
//     (replicas on brokers that are not live) and leader epoch; a
//     partition without a live leader is LEADER_NOT_AVAILABLE, leader -1;
//   - is_internal (v1+) for __consumer_offsets (offsets_topic.go);
//   - auto-creation: an unknown topic is created with num.partitions and
//     default.replication.factor when auto.create.topics.enable is set
//     and the request allows it (always before v4), and answered
//     LEADER_NOT_AVAILABLE until the controller's UpdateMetadata names it,
//     as Kafka; an invalid name gets INVALID_TOPIC_EXCEPTION;
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
	resp := kproto.MetadataResponse{ControllerID: b.meta.controllerID(), ClusterAuthorizedOperations: authorizedOpsUnknown}
	cid := b.clusterID
	resp.ClusterID = &cid
	for _, br := range b.meta.liveBrokers() {
		host, port := br.at(c.listener)
		resp.Brokers = append(resp.Brokers, kproto.MetadataBroker{NodeID: br.id, Host: host, Port: port, Rack: br.rackOrNil()})
	}
	if req.AllTopics() {
		for _, name := range b.meta.topicNames() {
			if mt, ok := b.metadataTopic(name); ok && c.allowedTopic(authz.OpDescribe, name) {
				resp.Topics = append(resp.Topics, mt)
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
		if name, ok := b.meta.topicByID(rt.TopicID); ok {
			if mt, ok := b.metadataTopic(name); ok {
				return mt
			}
		}
		return kproto.MetadataTopic{ErrorCode: kproto.CodeUnknownTopicID, TopicID: rt.TopicID, AuthorizedOperations: authorizedOpsUnknown}
	}
	name := *rt.Topic
	if mt, ok := b.metadataTopic(name); ok {
		return mt
	}
	out := kproto.MetadataTopic{Topic: rt.Topic, ErrorCode: kproto.CodeUnknownTopicOrPartition, AuthorizedOperations: authorizedOpsUnknown}
	if !b.cfg.AutoCreateTopics || !req.AllowAutoTopicCreation {
		return out
	}
	if err := validateTopicName(name); err != nil {
		out.ErrorCode = kproto.CodeInvalidTopicException
		return out
	}
	// Created now (or already, by another broker or an earlier request
	// whose UpdateMetadata is on its way): the leader is not available
	// until the controller's UpdateMetadata names the topic.
	out.ErrorCode = kproto.CodeLeaderNotAvailable
	if _, err := b.createTopic(topicSpec{name: name, partitions: -1, rf: -1}, false); err != nil {
		code, _ := codeOf(err)
		if code != kproto.CodeTopicAlreadyExists {
			b.log.Warn("auto-creating topic", "topic", name, "err", err)
		}
		if code == kproto.CodeInvalidReplicationFactor || code == kproto.CodeInvalidTopicException {
			out.ErrorCode = code
		}
	}
	return out
}

// metadataTopic is topic name as the metadata cache has it.
func (b *Broker) metadataTopic(name string) (kproto.MetadataTopic, bool) {
	id, parts, ok := b.meta.topic(name)
	if !ok {
		return kproto.MetadataTopic{}, false
	}
	out := kproto.MetadataTopic{Topic: &name, TopicID: id, IsInternal: isInternalTopic(name), AuthorizedOperations: authorizedOpsUnknown}
	out.Partitions = make([]kproto.MetadataPartition, len(parts))
	for p, cp := range parts {
		mp := kproto.MetadataPartition{
			Partition: int32(p), Leader: cp.leader, LeaderEpoch: cp.leaderEpoch,
			Replicas: nonNilIDs(cp.replicas), ISR: nonNilIDs(cp.isr), OfflineReplicas: nonNilIDs(cp.offline),
		}
		if mp.Leader < 0 || !b.meta.isLive(mp.Leader) {
			mp.ErrorCode, mp.Leader = kproto.CodeLeaderNotAvailable, -1
		}
		out.Partitions[p] = mp
	}
	return out, true
}

func nonNilIDs(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}
