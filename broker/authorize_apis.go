package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// The per-API pieces of the authorization checks (authorize.go has the
// checks themselves): what a refused partition, topic or group answers.

// deniedProduce is a produce partition refused WRITE on its topic.
func deniedProduce(partition int32) kproto.ProducePartitionResponse {
	return kproto.ProducePartitionResponse{Partition: partition, ErrorCode: kproto.CodeTopicAuthorizationFailed,
		BaseOffset: -1, LogAppendTime: -1, LogStartOffset: -1}
}

// fetchDenied: a follower's fetch (replica id >= 0) needs CLUSTER_ACTION
// on the cluster, a consumer's READ on each topic; a topic id (v13) that
// names no topic is UNKNOWN_TOPIC_ID before any check, as in Kafka. As
// in Kafka, the refused partitions are set aside: the fetch long-polls
// for the others, and answers at once only when every one is refused.
func (c *conn) fetchDenied(req *kproto.FetchRequest, rt *kproto.FetchTopic, t *topic) bool {
	if c.b.acls == nil {
		return false
	}
	if req.ReplicaID >= 0 {
		return !c.allowedCluster(authz.OpClusterAction)
	}
	name := rt.Topic
	if req.Version >= 13 {
		if t == nil {
			return false
		}
		name = t.name
	}
	return !c.allowedTopic(authz.OpRead, name)
}

// deniedFetch fills a fetch partition refused by fetchDenied.
func deniedFetch(fp *fetchPart, partition int32) {
	*fp = fetchPart{resp: kproto.FetchPartitionResponse{Partition: partition, ErrorCode: kproto.CodeTopicAuthorizationFailed,
		HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1}}
}

// deniedListOffset is a ListOffsets partition refused DESCRIBE on its topic.
func deniedListOffset(partition int32) kproto.ListOffsetsPartitionResponse {
	return kproto.ListOffsetsPartitionResponse{Partition: partition, ErrorCode: kproto.CodeTopicAuthorizationFailed,
		Timestamp: -1, Offset: -1, LeaderEpoch: -1}
}

// epochsDenied: OffsetForLeaderEpoch is allowed with CLUSTER_ACTION (the
// brokers') or DESCRIBE on the topic (consumers, KIP-320).
func (c *conn) epochsDenied(topic string) bool {
	return c.b.acls != nil && !c.allowedCluster(authz.OpClusterAction) && !c.allowedTopic(authz.OpDescribe, topic)
}

// metadataAuthorized is metadataFor behind KafkaApis' checks: DESCRIBE
// on the topic (by name, or the topic a v10+ id names), then, for a topic
// that would be auto-created, CREATE on the cluster or the topic.
func (c *conn) metadataAuthorized(rt *kproto.MetadataRequestTopic, req *kproto.MetadataRequest) kproto.MetadataTopic {
	b := c.b
	if b.acls == nil {
		return b.metadataFor(rt, req)
	}
	denied := kproto.MetadataTopic{Topic: rt.Topic, ErrorCode: kproto.CodeTopicAuthorizationFailed, AuthorizedOperations: authorizedOpsUnknown}
	if rt.Topic == nil {
		if name, ok := b.meta.topicByID(rt.TopicID); ok && !c.allowedTopic(authz.OpDescribe, name) {
			denied.TopicID = rt.TopicID // ids are not secret; the name is
			return denied
		}
		return b.metadataFor(rt, req)
	}
	name := *rt.Topic
	if !c.allowedTopic(authz.OpDescribe, name) {
		return denied
	}
	if _, _, known := b.meta.topic(name); !known && b.cfg.AutoCreateTopics && req.AllowAutoTopicCreation &&
		!c.allowedCluster(authz.OpCreate) && !c.allowedTopic(authz.OpCreate, name) {
		return denied
	}
	return b.metadataFor(rt, req)
}

// setAuthorizedOperations fills the authorized-operations fields a
// Metadata request asks for.
func (c *conn) setAuthorizedOperations(req *kproto.MetadataRequest, resp *kproto.MetadataResponse) {
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = c.authorizedOperations(authz.ResourceCluster, authz.ClusterName)
	}
	if !req.IncludeTopicAuthorizedOperations {
		return
	}
	for i := range resp.Topics {
		if t := &resp.Topics[i]; t.Topic != nil && t.ErrorCode != kproto.CodeTopicAuthorizationFailed {
			t.AuthorizedOperations = c.authorizedOperations(authz.ResourceTopic, *t.Topic)
		}
	}
}

// deniedTopicCreation is a CreateTopics topic refused CREATE on the
// cluster and on the topic.
func (c *conn) deniedTopicCreation(st kmsg.CreateTopicsResponseTopic) kmsg.CreateTopicsResponseTopic {
	msg := "Authorization failed."
	st.ErrorCode, st.ErrorMessage = int16(kproto.CodeTopicAuthorizationFailed), &msg
	c.hideCreatedConfigs(&st)
	return st
}

// topicDeletionDenied fills st when DeleteTopics may not delete name:
// DELETE is needed; a topic named by id also needs DESCRIBE, without
// which its name is not given back (KafkaApis: ids are not secret, names
// are).
func (c *conn) topicDeletionDenied(st *kmsg.DeleteTopicsResponseTopic, name string) bool {
	if c.b.acls == nil {
		return false
	}
	byID := st.TopicID != ([16]byte{})
	if byID && !c.allowedTopic(authz.OpDescribe, name) {
		st.ErrorCode = int16(kproto.CodeTopicAuthorizationFailed)
		return true
	}
	if !c.allowedTopic(authz.OpDelete, name) {
		st.ErrorCode = int16(kproto.CodeTopicAuthorizationFailed)
		n := name
		st.Topic = &n
		return true
	}
	return false
}

// hideCreatedConfigs drops a CreateTopics topic's configs and sets its
// topic_config_error_code (v5+) when the principal may not
// DESCRIBE_CONFIGS it, as KafkaApis does for every topic of the request.
func (c *conn) hideCreatedConfigs(st *kmsg.CreateTopicsResponseTopic) {
	if !c.allowedTopic(authz.OpDescribeConfigs, st.Topic) {
		st.Configs, st.ConfigErrorCode = nil, int16(kproto.CodeTopicAuthorizationFailed)
	}
}

// configsDenied is the check of DescribeConfigs (op DESCRIBE_CONFIGS) and
// AlterConfigs / IncrementalAlterConfigs (ALTER_CONFIGS): on the cluster
// for a broker or broker logger, on the topic for a topic. It returns the
// refusal's code, or 0.
func (c *conn) configsDenied(op authz.Operation, rt kmsg.ConfigResourceType, name string) int16 {
	switch rt {
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		if !c.allowedCluster(op) {
			return int16(kproto.CodeClusterAuthorizationFailed)
		}
	case kmsg.ConfigResourceTypeTopic:
		if !c.allowedTopic(op, name) {
			return int16(kproto.CodeTopicAuthorizationFailed)
		}
	}
	return 0
}

// kerrMessage is an error's default message (Errors.message()), which
// Kafka sends where it answers with the bare error.
func kerrMessage(code int16) *string {
	var msg string
	switch kproto.ErrorCode(code) {
	case kproto.CodeTopicAuthorizationFailed:
		msg = "Topic authorization failed."
	case kproto.CodeClusterAuthorizationFailed:
		msg = "Cluster authorization failed."
	case kproto.CodeGroupAuthorizationFailed:
		msg = "Group authorization failed."
	case codeTransactionalIDAuthorizationFailed:
		msg = "Transactional Id authorization failed."
	default:
		return nil
	}
	return &msg
}

// offsetCommitCode is a committed partition's code: a topic the
// principal may not READ is TOPIC_AUTHORIZATION_FAILED whatever the
// group's state (Kafka filters those before the coordinator sees them).
func (c *conn) offsetCommitCode(topic string, code int16) int16 {
	if code != int16(kproto.CodeGroupAuthorizationFailed) && !c.allowedTopic(authz.OpRead, topic) {
		return int16(kproto.CodeTopicAuthorizationFailed)
	}
	return code
}

// fetchOffsetsAuthorized is coordinator.fetchOffsets behind OffsetFetch's
// checks: DESCRIBE on the group, then DESCRIBE on each topic: asked-for
// topics it may not describe answer TOPIC_AUTHORIZATION_FAILED, and an
// all-topics fetch leaves them out.
func (c *conn) fetchOffsetsAuthorized(group string, topics []fetchTopic) (int16, []fetchedTopic) {
	if !c.allowedGroup(authz.OpDescribe, group) {
		return int16(kproto.CodeGroupAuthorizationFailed), nil
	}
	code, out := c.b.groups.fetchOffsets(group, topics)
	if c.b.acls == nil || code != 0 {
		return code, out
	}
	kept := out[:0]
	for _, t := range out {
		if c.allowedTopic(authz.OpDescribe, t.name) {
			kept = append(kept, t)
			continue
		}
		if topics == nil {
			continue
		}
		empty := ""
		for i := range t.partitions {
			t.partitions[i] = fetchedPartition{partition: t.partitions[i].partition, offset: -1, leaderEpoch: -1,
				metadata: &empty, errorCode: int16(kproto.CodeTopicAuthorizationFailed)}
		}
		kept = append(kept, t)
	}
	return 0, kept
}

// deniedDescribedGroup is a DescribeGroups group the principal may not
// DESCRIBE (DescribeGroupsResponse.forError).
func deniedDescribedGroup(name string) kmsg.DescribeGroupsResponseGroup {
	rg := kmsg.NewDescribeGroupsResponseGroup()
	rg.Group, rg.ErrorCode, rg.AuthorizedOperations = name, int16(kproto.CodeGroupAuthorizationFailed), -2147483648
	return rg
}

// coordinatorDenied: FindCoordinator needs DESCRIBE on the group (key
// type 0) or on the transactional id (1).
func (c *conn) coordinatorDenied(keyType int8, key string) int16 {
	switch {
	case keyType == 0 && !c.allowedGroup(authz.OpDescribe, key):
		return int16(kproto.CodeGroupAuthorizationFailed)
	case keyType == 1 && !c.allowed(authz.OpDescribe, authz.ResourceTransactionalID, key):
		return int16(codeTransactionalIDAuthorizationFailed)
	}
	return 0
}

// clusterOperations is DescribeCluster's cluster_authorized_operations
// (AuthHelper.computeDescribeClusterResponse).
func (c *conn) clusterOperations(asked bool) int32 {
	switch {
	case !asked:
		return authorizedOpsUnknown
	case !c.allowedCluster(authz.OpDescribe):
		return 0
	}
	return c.authorizedOperations(authz.ResourceCluster, authz.ClusterName)
}

// clusterActionDenied: the controller's requests (LeaderAndIsr,
// StopReplica, UpdateMetadata) and ControlledShutdown need CLUSTER_ACTION
// on the cluster (AuthHelper.authorizeClusterOperation), which the
// brokers' principals have as super users.
func (c *conn) clusterActionDenied() bool {
	return c.b.acls != nil && !c.allowedCluster(authz.OpClusterAction)
}

// deniedLeaderAndISR is LeaderAndIsrRequest.getErrorResponse (v5+):
// the error at the top and on every partition.
func deniedLeaderAndISR(req *kmsg.LeaderAndISRRequest, resp *kmsg.LeaderAndISRResponse) *kmsg.LeaderAndISRResponse {
	code := int16(kproto.CodeClusterAuthorizationFailed)
	resp.ErrorCode = code
	for _, ts := range req.TopicStates {
		rt := kmsg.NewLeaderAndISRResponseTopic()
		rt.TopicID = ts.TopicID
		for _, ps := range ts.PartitionStates {
			rp := kmsg.NewLeaderAndISRResponseTopicPartition()
			rp.Partition, rp.ErrorCode = ps.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// deniedStopReplica is StopReplicaRequest.getErrorResponse: the error at
// the top and on every partition.
func deniedStopReplica(req *kmsg.StopReplicaRequest, resp *kmsg.StopReplicaResponse) *kmsg.StopReplicaResponse {
	code := int16(kproto.CodeClusterAuthorizationFailed)
	resp.ErrorCode = code
	for _, rt := range req.Topics {
		for _, ps := range rt.PartitionStates {
			rp := kmsg.NewStopReplicaResponsePartition()
			rp.Topic, rp.Partition, rp.ErrorCode = rt.Topic, ps.Partition, code
			resp.Partitions = append(resp.Partitions, rp)
		}
	}
	return resp
}
