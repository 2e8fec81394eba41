package kafkaacl

import (
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// The ACLs of the matrix (created through broker 1, checked through
// both brokers).
var matrixACLs = []kmsg.CreateACLsRequestCreation{
	aclOf(topicT, "fin-", prefixed, alice, "*", kmsg.ACLOperationWrite, allowP),
	aclOf(topicT, "fin-ledger", literal, alice, "*", kmsg.ACLOperationRead, allowP),
	aclOf(groupT, "g-alice", literal, alice, "*", kmsg.ACLOperationRead, allowP),
	aclOf(topicT, "*", literal, bob, "*", kmsg.ACLOperationDescribe, allowP),
	aclOf(topicT, "fin-secret", literal, "User:*", "*", kmsg.ACLOperationWrite, denyP),
	aclOf(topicT, "fin-ledger", literal, bob, "10.1.2.3", kmsg.ACLOperationRead, allowP),
	aclOf(groupT, "g-", prefixed, bob, "*", kmsg.ACLOperationDescribe, allowP),
}

// matrix is one broker cluster with the matrix's topics and ACLs.
type matrix struct {
	t   *testing.T
	p   *pki
	cl  *kafkaenv.Cluster
	ids map[string][16]byte // topic ids
	// leaders: broker id of each topic's partition 0
	leaders map[string]int32
	clients map[string]*kgo.Client
}

func newMatrix(t *testing.T) *matrix {
	p := newPKI(t)
	m := &matrix{t: t, p: p, cl: kafkaenv.StartCluster(t, 2, p.secured()), ids: map[string][16]byte{},
		leaders: map[string]int32{}, clients: map[string]*kgo.Client{}}
	adm := p.admin(m.cl.Broker(1), admin)
	for topic, parts := range map[string]int32{"fin-ledger": 2, "fin-secret": 1, "other": 1} {
		rf := int16(1)
		if topic == "fin-ledger" {
			rf = 2 // both brokers are replicas: a follower fetch names the other
		}
		if _, err := adm.CreateTopic(ctx(t), parts, rf, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	createACLs(t, m.client(admin), matrixACLs...)
	for _, id := range []int32{1, 2} {
		waitFor(t, "broker's ACL cache", func() bool {
			return len(on[*kmsg.DescribeACLsResponse](t, m.client(admin), id, anyFilter()).Resources) == 6
		})
	}
	md, err := adm.Metadata(ctx(t), "fin-ledger", "fin-secret", "other")
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range md.Topics {
		m.ids[td.Topic], m.leaders[td.Topic] = td.ID, td.Partitions[0].Leader
	}
	if err := m.client(admin).ProduceSync(ctx(t), &kgo.Record{Topic: "fin-ledger", Value: []byte("seed")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// The first FindCoordinator creates __consumer_offsets; the matrix
	// starts once every group it names has a coordinator.
	for _, id := range []int32{1, 2} {
		waitFor(t, "__consumer_offsets", func() bool {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.Version, fc.CoordinatorKeys = 4, []string{"g-alice", "g-bob", "g-x"}
			for _, c := range on[*kmsg.FindCoordinatorResponse](t, m.client(admin), id, fc).Coordinators {
				if c.ErrorCode != 0 {
					return false
				}
			}
			return true
		})
	}
	return m
}

// client is who's client (through broker 1's listener; requests go to
// whichever broker leads or coordinates).
func (m *matrix) client(who string) *kgo.Client {
	if c := m.clients[who]; c != nil {
		return c
	}
	c := m.p.as(m.cl.Broker(1), who, kgo.DisableIdempotentWrite(), kgo.RecordRetries(0),
		kgo.ProduceRequestTimeout(5*time.Second), kgo.RecordDeliveryTimeout(10*time.Second))
	m.clients[who] = c
	return c
}

func code(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if err != nil {
		return -100 // not a Kafka error
	}
	return 0
}

func (m *matrix) produce(who, topic string) int16 {
	return code(m.client(who).ProduceSync(ctx(m.t), &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr())
}

// fetch sends a Fetch of topic's partition 0 to its leader (as a
// follower when replica >= 0) and returns the partition's code.
func (m *matrix) fetch(who, topic string, replica int32) int16 {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.MaxWaitMillis = replica, 1<<20, 10
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, m.ids[topic]
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := on[*kmsg.FetchResponse](m.t, m.client(who), m.leaders[topic], req)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// visible is the topics an all-topics Metadata shows who, on broker id.
func (m *matrix) visible(who string, id int32) []string {
	resp := on[*kmsg.MetadataResponse](m.t, m.client(who), id, kmsg.NewPtrMetadataRequest())
	var out []string
	for _, t := range resp.Topics {
		out = append(out, *t.Topic)
	}
	sort.Strings(out)
	return out
}

// metadataCode is the code of one named topic in Metadata on broker id.
func (m *matrix) metadataCode(who, topic string, id int32, autoCreate bool) int16 {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = autoCreate
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	return on[*kmsg.MetadataResponse](m.t, m.client(who), id, req).Topics[0].ErrorCode
}

func (m *matrix) listOffsets(who, topic string) int16 {
	return m.latestOffset(who, topic).ErrorCode
}

// latestOffset is ListOffsets for the latest offset (the high watermark)
// of topic's partition 0, sent as who to its leader.
func (m *matrix) latestOffset(who, topic string) kmsg.ListOffsetsResponseTopicPartition {
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return on[*kmsg.ListOffsetsResponse](m.t, m.client(who), m.leaders[topic], req).Topics[0].Partitions[0]
}

func (m *matrix) initProducerID(who string) int16 {
	return send[*kmsg.InitProducerIDResponse](m, who, kmsg.NewPtrInitProducerIDRequest()).ErrorCode
}

func (m *matrix) findCoordinator(who, group string) int16 {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = group
	return send[*kmsg.FindCoordinatorResponse](m, who, req).ErrorCode
}

// send sends req as who (routed by the client) and fails the test when
// it gets no answer.
func send[R kmsg.Response](m *matrix, who string, req kmsg.Request) R {
	m.t.Helper()
	resp, err := m.client(who).Request(ctx(m.t), req)
	if err != nil {
		m.t.Fatal(err)
	}
	return resp.(R)
}

// groupCode sends a group request to the group's coordinator.
func groupCode[R kmsg.Response](m *matrix, who, group string, req kmsg.Request, code func(R) int16) int16 {
	return groupCodeVia(m, m.client(who), group, req, code)
}

// groupCodeVia is groupCode over client c.
func groupCodeVia[R kmsg.Response](m *matrix, c *kgo.Client, group string, req kmsg.Request, code func(R) int16) int16 {
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = group
	fr, err := fc.RequestWith(ctx(m.t), m.client(admin))
	if err != nil || fr.ErrorCode != 0 {
		m.t.Fatalf("FindCoordinator %s: %v %+v", group, err, fr)
	}
	return code(on[R](m.t, c, fr.NodeID, req))
}

func (m *matrix) joinGroup(who, group string) int16 {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = group, 10000, 10000, "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name = "range"
	req.Protocols = append(req.Protocols, p)
	return groupCode(m, who, group, req, func(r *kmsg.JoinGroupResponse) int16 { return r.ErrorCode })
}

func (m *matrix) commit(who, group, topic string) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Offset = 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return groupCode(m, who, group, req, func(r *kmsg.OffsetCommitResponse) int16 { return r.Topics[0].Partitions[0].ErrorCode })
}

func (m *matrix) offsetFetch(who, group, topic string) int16 {
	// kgo sends the broker's highest version (8: groups in an array).
	req := kmsg.NewPtrOffsetFetchRequest()
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	return groupCode(m, who, group, req, func(r *kmsg.OffsetFetchResponse) int16 {
		if g := r.Groups[0]; g.ErrorCode != 0 {
			return g.ErrorCode
		}
		return r.Groups[0].Topics[0].Partitions[0].ErrorCode
	})
}

func (m *matrix) describeGroup(who, group string) int16 {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	return groupCode(m, who, group, req, func(r *kmsg.DescribeGroupsResponse) int16 { return r.Groups[0].ErrorCode })
}

func (m *matrix) deleteGroup(who, group string) int16 {
	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Groups = []string{group}
	return groupCode(m, who, group, req, func(r *kmsg.DeleteGroupsResponse) int16 { return r.Groups[0].ErrorCode })
}

func (m *matrix) listGroups(who string) []string {
	var out []string
	for _, id := range []int32{1, 2} {
		for _, g := range on[*kmsg.ListGroupsResponse](m.t, m.client(who), id, kmsg.NewPtrListGroupsRequest()).Groups {
			out = append(out, g.Group)
		}
	}
	sort.Strings(out)
	return out
}

func (m *matrix) createTopic(who, topic string) int16 {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, rt)
	return send[*kmsg.CreateTopicsResponse](m, who, req).Topics[0].ErrorCode
}

func (m *matrix) deleteTopic(who, topic string) int16 {
	req := kmsg.NewPtrDeleteTopicsRequest()
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics, req.TopicNames, req.TimeoutMillis = append(req.Topics, rt), []string{topic}, 5000
	return send[*kmsg.DeleteTopicsResponse](m, who, req).Topics[0].ErrorCode
}

func (m *matrix) describeConfigs(who, topic string) int16 {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	req.Resources = append(req.Resources, r)
	return send[*kmsg.DescribeConfigsResponse](m, who, req).Resources[0].ErrorCode
}

func (m *matrix) alterConfigs(who, topic string) int16 {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "retention.ms", kmsg.StringPtr("100000")
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	return send[*kmsg.IncrementalAlterConfigsResponse](m, who, req).Resources[0].ErrorCode
}

func (m *matrix) createPartitions(who, topic string) int16 {
	req := kmsg.NewPtrCreatePartitionsRequest()
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = topic, 3
	req.Topics, req.ValidateOnly = append(req.Topics, rt), true
	return send[*kmsg.CreatePartitionsResponse](m, who, req).Topics[0].ErrorCode
}

func (m *matrix) clusterOps(who string) int32 {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeClusterAuthorizedOperations = true
	resp, err := req.RequestWith(ctx(m.t), m.client(who))
	if err != nil || resp.ErrorCode != 0 {
		m.t.Fatalf("DescribeCluster: %v %+v", err, resp)
	}
	return resp.ClusterAuthorizedOperations
}

func (m *matrix) syncGroup(who, group string) int16 {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = group, "m", 1
	return groupCode(m, who, group, req, func(r *kmsg.SyncGroupResponse) int16 { return r.ErrorCode })
}

func (m *matrix) heartbeat(who, group string) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = group, "m", 1
	return groupCode(m, who, group, req, func(r *kmsg.HeartbeatResponse) int16 { return r.ErrorCode })
}

func (m *matrix) leaveGroup(who, group string) int16 {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = group
	mem := kmsg.NewLeaveGroupRequestMember()
	mem.MemberID = "m"
	req.Members = append(req.Members, mem)
	return groupCode(m, who, group, req, func(r *kmsg.LeaveGroupResponse) int16 { return r.ErrorCode })
}

func (m *matrix) offsetDelete(who, group, topic string) int16 {
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = group
	rt := kmsg.NewOffsetDeleteRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetDeleteRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return groupCode(m, who, group, req, func(r *kmsg.OffsetDeleteResponse) int16 {
		if r.ErrorCode != 0 {
			return r.ErrorCode
		}
		return r.Topics[0].Partitions[0].ErrorCode
	})
}

func (m *matrix) epochs(who, topic string) int16 {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.CurrentLeaderEpoch, rp.LeaderEpoch = -1, 0
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return on[*kmsg.OffsetForLeaderEpochResponse](m.t, m.client(who), m.leaders[topic], req).Topics[0].Partitions[0].ErrorCode
}

// brokerConfigs is DescribeConfigs (alter false) or AlterConfigs of broker
// 1's configs.
func (m *matrix) brokerConfigs(who string, alter bool) int16 {
	if alter {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		req.Resources = append(req.Resources, r)
		return on[*kmsg.IncrementalAlterConfigsResponse](m.t, m.client(who), 1, req).Resources[0].ErrorCode
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	req.Resources = append(req.Resources, r)
	return on[*kmsg.DescribeConfigsResponse](m.t, m.client(who), 1, req).Resources[0].ErrorCode
}

// byID sends Metadata (v12) or DeleteTopics (v6) naming topic by its id
// and returns the code and whether the answer gave the name back.
func (m *matrix) byID(who, topic string, del bool) (int16, bool) {
	if del {
		req := kmsg.NewPtrDeleteTopicsRequest()
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.TopicID = m.ids[topic]
		req.Topics, req.TimeoutMillis = append(req.Topics, rt), 5000
		resp := send[*kmsg.DeleteTopicsResponse](m, who, req)
		return resp.Topics[0].ErrorCode, resp.Topics[0].Topic != nil
	}
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.TopicID = m.ids[topic]
	req.Topics = append(req.Topics, rt)
	r := on[*kmsg.MetadataResponse](m.t, m.client(who), 1, req).Topics[0]
	return r.ErrorCode, r.Topic != nil
}

// controllerRequest sends one of the controller's requests (or
// ControlledShutdown) to broker 2 as who; the brokers' principal is the
// only one allowed CLUSTER_ACTION.
func (m *matrix) controllerRequest(who string, key int16) int16 {
	c := m.client(who)
	switch key {
	case 4:
		req := kmsg.NewPtrLeaderAndISRRequest()
		req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 1, 1, -1
		ts := kmsg.NewLeaderAndISRRequestTopicState()
		ts.Topic, ts.TopicID = "fin-ledger", m.ids["fin-ledger"]
		ts.PartitionStates = append(ts.PartitionStates, kmsg.NewLeaderAndISRRequestTopicPartition())
		req.TopicStates = append(req.TopicStates, ts)
		r := on[*kmsg.LeaderAndISRResponse](m.t, c, 2, req)
		if r.ErrorCode != 0 && (len(r.Topics) != 1 || r.Topics[0].Partitions[0].ErrorCode != r.ErrorCode) {
			m.t.Errorf("LeaderAndIsr refused without its partitions' errors: %+v", r)
		}
		return r.ErrorCode
	case 5:
		req := kmsg.NewPtrStopReplicaRequest()
		req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 1, 1, -1
		rt := kmsg.NewStopReplicaRequestTopic()
		rt.Topic = "fin-ledger"
		rt.PartitionStates = append(rt.PartitionStates, kmsg.NewStopReplicaRequestTopicPartitionState())
		req.Topics = append(req.Topics, rt)
		return on[*kmsg.StopReplicaResponse](m.t, c, 2, req).ErrorCode
	case 6:
		req := kmsg.NewPtrUpdateMetadataRequest()
		req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 1, 1, -1
		return on[*kmsg.UpdateMetadataResponse](m.t, c, 2, req).ErrorCode
	}
	req := kmsg.NewPtrControlledShutdownRequest()
	req.BrokerID, req.BrokerEpoch = 2, -1
	resp, err := req.RequestWith(ctx(m.t), c)
	if err != nil {
		m.t.Fatal(err)
	}
	return resp.ErrorCode
}

var (
	taf = kerr.TopicAuthorizationFailed.Code
	gaf = kerr.GroupAuthorizationFailed.Code
	caf = kerr.ClusterAuthorizationFailed.Code
)

// TestACLMatrix: principal × operation × resource pattern → the answer
// Kafka's AclAuthorizer and KafkaApis give, through both brokers.
func TestACLMatrix(t *testing.T) {
	m := newMatrix(t)
	for _, row := range []struct {
		name string
		got  func() int16
		want int16
	}{
		{"alice WRITE fin-ledger (prefixed fin- allow)", func() int16 { return m.produce(alice, "fin-ledger") }, 0},
		{"alice WRITE fin-secret (User:* deny beats allow)", func() int16 { return m.produce(alice, "fin-secret") }, taf},
		{"alice WRITE other (no ACL)", func() int16 { return m.produce(alice, "other") }, taf},
		{"bob WRITE fin-ledger (DESCRIBE only)", func() int16 { return m.produce(bob, "fin-ledger") }, taf},
		{"anonymous WRITE fin-ledger", func() int16 { return m.produce(anon, "fin-ledger") }, taf},
		{"admin WRITE other (super user)", func() int16 { return m.produce(admin, "other") }, 0},
		{"alice READ fin-ledger", func() int16 { return m.fetch(alice, "fin-ledger", -1) }, 0},
		{"alice READ fin-secret (WRITE is not READ)", func() int16 { return m.fetch(alice, "fin-secret", -1) }, taf},
		{"bob READ fin-ledger (his ACL is for host 10.1.2.3)", func() int16 { return m.fetch(bob, "fin-ledger", -1) }, taf},
		{"alice follower fetch (no CLUSTER_ACTION)", func() int16 { return m.fetch(alice, "fin-ledger", 1) }, taf},
		{"admin follower fetch", func() int16 { return m.fetch(admin, "fin-ledger", 3-m.leaders["fin-ledger"]) }, 0},
		{"alice DESCRIBE other", func() int16 { return m.metadataCode(alice, "other", 2, false) }, taf},
		{"alice DESCRIBE fin-secret (WRITE implies DESCRIBE)", func() int16 { return m.metadataCode(alice, "fin-secret", 2, false) }, 0},
		{"alice DESCRIBE a missing topic she may not describe", func() int16 { return m.metadataCode(alice, "nope", 1, false) }, taf},
		{"alice auto-creates fin-new without CREATE", func() int16 { return m.metadataCode(alice, "fin-new", 1, true) }, taf},
		{"alice DESCRIBE fin-new (missing, not auto-created)", func() int16 { return m.metadataCode(alice, "fin-new", 1, false) }, kerr.UnknownTopicOrPartition.Code},
		{"bob ListOffsets fin-ledger (DESCRIBE on *)", func() int16 { return m.listOffsets(bob, "fin-ledger") }, 0},
		{"anonymous ListOffsets fin-ledger", func() int16 { return m.listOffsets(anon, "fin-ledger") }, taf},
		{"alice idempotent InitProducerId (WRITE on some topic)", func() int16 { return m.initProducerID(alice) }, 0},
		{"bob idempotent InitProducerId", func() int16 { return m.initProducerID(bob) }, caf},
		{"alice FindCoordinator g-alice", func() int16 { return m.findCoordinator(alice, "g-alice") }, 0},
		{"alice FindCoordinator g-bob", func() int16 { return m.findCoordinator(alice, "g-bob") }, gaf},
		{"bob FindCoordinator g-x (prefixed DESCRIBE)", func() int16 { return m.findCoordinator(bob, "g-x") }, 0},
		{"bob JoinGroup g-x (DESCRIBE is not READ)", func() int16 { return m.joinGroup(bob, "g-x") }, gaf},
		{"alice OffsetCommit g-alice fin-ledger", func() int16 { return m.commit(alice, "g-alice", "fin-ledger") }, 0},
		{"alice OffsetCommit g-alice fin-secret (no READ)", func() int16 { return m.commit(alice, "g-alice", "fin-secret") }, taf},
		{"bob OffsetCommit g-x", func() int16 { return m.commit(bob, "g-x", "fin-ledger") }, gaf},
		{"alice OffsetFetch g-alice fin-ledger", func() int16 { return m.offsetFetch(alice, "g-alice", "fin-ledger") }, 0},
		{"alice OffsetFetch g-alice other (no DESCRIBE)", func() int16 { return m.offsetFetch(alice, "g-alice", "other") }, taf},
		{"bob OffsetFetch g-alice (prefixed DESCRIBE g-)", func() int16 { return m.offsetFetch(bob, "g-alice", "fin-ledger") }, 0},
		{"anonymous OffsetFetch g-alice", func() int16 { return m.offsetFetch(anon, "g-alice", "fin-ledger") }, gaf},
		{"alice DescribeGroups g-bob", func() int16 { return m.describeGroup(alice, "g-bob") }, gaf},
		{"bob DescribeGroups g-alice", func() int16 { return m.describeGroup(bob, "g-alice") }, 0},
		{"alice DeleteGroups g-alice (READ is not DELETE)", func() int16 { return m.deleteGroup(alice, "g-alice") }, gaf},
		{"alice CreateTopics fin-new", func() int16 { return m.createTopic(alice, "fin-new") }, taf},
		{"alice DeleteTopics other", func() int16 { return m.deleteTopic(alice, "other") }, taf},
		{"alice DeleteTopics fin-ledger (WRITE is not DELETE)", func() int16 { return m.deleteTopic(alice, "fin-ledger") }, taf},
		{"alice DescribeConfigs fin-ledger", func() int16 { return m.describeConfigs(alice, "fin-ledger") }, taf},
		{"admin DescribeConfigs fin-ledger", func() int16 { return m.describeConfigs(admin, "fin-ledger") }, 0},
		{"alice IncrementalAlterConfigs fin-ledger", func() int16 { return m.alterConfigs(alice, "fin-ledger") }, taf},
		{"alice CreatePartitions fin-ledger", func() int16 { return m.createPartitions(alice, "fin-ledger") }, taf},
		{"admin CreatePartitions fin-ledger (validate only)", func() int16 { return m.createPartitions(admin, "fin-ledger") }, 0},
		{"bob SyncGroup g-x", func() int16 { return m.syncGroup(bob, "g-x") }, gaf},
		{"bob Heartbeat g-x", func() int16 { return m.heartbeat(bob, "g-x") }, gaf},
		{"bob LeaveGroup g-x", func() int16 { return m.leaveGroup(bob, "g-x") }, gaf},
		{"alice Heartbeat g-alice (allowed: the member is unknown)", func() int16 { return m.heartbeat(alice, "g-alice") }, kerr.UnknownMemberID.Code},
		{"alice OffsetDelete g-alice (READ is not DELETE)", func() int16 { return m.offsetDelete(alice, "g-alice", "fin-ledger") }, gaf},
		{"admin OffsetDelete g-alice fin-ledger", func() int16 { return m.offsetDelete(admin, "g-alice", "fin-ledger") }, 0},
		{"anonymous OffsetForLeaderEpoch fin-ledger", func() int16 { return m.epochs(anon, "fin-ledger") }, taf},
		{"bob OffsetForLeaderEpoch fin-ledger (DESCRIBE)", func() int16 { return m.epochs(bob, "fin-ledger") }, 0},
		{"alice DescribeConfigs broker 1", func() int16 { return m.brokerConfigs(alice, false) }, caf},
		{"admin DescribeConfigs broker 1", func() int16 { return m.brokerConfigs(admin, false) }, 0},
		{"alice IncrementalAlterConfigs broker 1", func() int16 { return m.brokerConfigs(alice, true) }, caf},
		{"alice LeaderAndIsr (no CLUSTER_ACTION)", func() int16 { return m.controllerRequest(alice, 4) }, caf},
		{"alice StopReplica", func() int16 { return m.controllerRequest(alice, 5) }, caf},
		{"alice UpdateMetadata", func() int16 { return m.controllerRequest(alice, 6) }, caf},
		{"anonymous ControlledShutdown", func() int16 { return m.controllerRequest(anon, 7) }, caf},
	} {
		if got := row.got(); got != row.want {
			t.Errorf("%s: code %d (%v), want %d (%v)", row.name, got, kerr.ErrorForCode(got), row.want, kerr.ErrorForCode(row.want))
		}
	}

	// By topic id: a topic one may not describe is refused without its name.
	for _, c := range []struct {
		who, topic string
		del        bool
		code       int16
		named      bool
	}{
		{alice, "other", false, taf, false},
		{alice, "fin-ledger", false, 0, true},
		{bob, "other", true, taf, true}, // DESCRIBE, not DELETE: the name is known to him
		{anon, "other", true, taf, false},
	} {
		if code, named := m.byID(c.who, c.topic, c.del); code != c.code || named != c.named {
			t.Errorf("%s by id %s (delete %v): code %d, name given %v; want %d, %v", c.who, c.topic, c.del, code, named, c.code, c.named)
		}
	}

	// OffsetFetch v1 (no top-level error): a refused topic's partitions
	// carry TOPIC_AUTHORIZATION_FAILED, the others none.
	v1 := m.p.as(m.cl.Broker(1), alice, kgo.MaxVersions(kversion.V0_10_1()))
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Group = "g-alice"
	for _, topic := range []string{"fin-ledger", "other"} {
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0}
		of.Topics = append(of.Topics, rt)
	}
	var v1codes []int16
	groupCodeVia(m, v1, "g-alice", of, func(r *kmsg.OffsetFetchResponse) int16 {
		if r.Version != 1 {
			t.Errorf("OffsetFetch sent at v%d, want v1", r.Version)
		}
		for _, rt := range r.Topics {
			v1codes = append(v1codes, rt.Partitions[0].ErrorCode)
		}
		return 0
	})
	if !slices.Equal(v1codes, []int16{0, taf}) {
		t.Errorf("OffsetFetch v1 codes %v, want [0 %d]", v1codes, taf)
	}

	// Metadata hides the topics a principal may not describe, on both brokers.
	for _, id := range []int32{1, 2} {
		for who, want := range map[string][]string{
			// __consumer_offsets is a topic as any for DESCRIBE (bob's is on *).
			alice: {"fin-ledger", "fin-secret"}, bob: {"__consumer_offsets", "fin-ledger", "fin-secret", "other"}, anon: nil,
			admin: {"__consumer_offsets", "fin-ledger", "fin-secret", "other"},
		} {
			if got := m.visible(who, id); !slices.Equal(got, want) {
				t.Errorf("broker %d shows %s the topics %q, want %q", id, who, got, want)
			}
		}
	}
	// ListGroups: the groups one may describe (alice committed g-alice).
	if got := m.listGroups(bob); !slices.Equal(got, []string{"g-alice"}) {
		t.Errorf("bob lists groups %q", got)
	}
	if got := m.listGroups(anon); len(got) != 0 {
		t.Errorf("anonymous lists groups %q", got)
	}
	// DescribeCluster refuses nobody; the operations say what one may do.
	if got := m.clusterOps(alice); got != 0 {
		t.Errorf("alice's cluster operations %b, want 0", got)
	}
	if got, want := m.clusterOps(admin), int32(1<<5|1<<7|1<<8|1<<9|1<<10|1<<11|1<<12); got != want {
		t.Errorf("admin's cluster operations %b, want %b", got, want)
	}

	// Granting CREATE on the prefix lets alice create, and auto-create.
	createACLs(t, m.client(admin), aclOf(topicT, "fin-", prefixed, alice, "*", kmsg.ACLOperationCreate, allowP))
	waitFor(t, "CREATE on fin- applies on broker 1", func() bool { return m.createTopic(alice, "fin-new") == 0 })
	waitFor(t, "CREATE on fin- applies on broker 2", func() bool { return m.metadataCode(alice, "fin-auto", 2, true) != taf })
}

// TestConsumerGroupAllowed: a real kgo consumer group of alice reads
// fin-ledger and commits (JoinGroup, SyncGroup, Heartbeat, OffsetCommit,
// OffsetFetch all allowed by READ on g-alice and fin-ledger), and the
// same consumer in a group she may not read fails with
// GROUP_AUTHORIZATION_FAILED.
func TestConsumerGroupAllowed(t *testing.T) {
	m := newMatrix(t)
	c := m.p.as(m.cl.Broker(2), alice, kgo.ConsumerGroup("g-alice"), kgo.ConsumeTopics("fin-ledger"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	fs := c.PollFetches(ctx(t))
	if err := fs.Err0(); err != nil {
		t.Fatalf("alice's group consumer: %v", err)
	}
	if fs.NumRecords() == 0 {
		t.Fatal("alice's group consumer read nothing")
	}
	if err := c.CommitUncommittedOffsets(ctx(t)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	denied := m.p.as(m.cl.Broker(2), alice, kgo.ConsumerGroup("g-bob"), kgo.ConsumeTopics("fin-ledger"))
	fs = denied.PollFetches(ctx(t))
	if err := fs.Err0(); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("alice in g-bob: %v, want GROUP_AUTHORIZATION_FAILED", err)
	}
}

// TestFetchLongPollsPastRefusedTopics: a fetch of a topic alice may read
// and one she may not waits for data on the first (Kafka sets refused
// partitions aside); a fetch of refused topics only answers at once.
func TestFetchLongPollsPastRefusedTopics(t *testing.T) {
	m := newMatrix(t)
	// A topic alice may not read, on the broker leading fin-ledger's
	// partition 0, so that one Fetch asks for both.
	refused, leader := "poll-refused", m.leaders["fin-ledger"]
	ct := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = refused, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Replicas = []int32{leader}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	ct.Topics = append(ct.Topics, rt)
	if r, err := ct.RequestWith(ctx(t), m.client(admin)); err != nil || r.Topics[0].ErrorCode != 0 {
		t.Fatalf("creating %s on broker %d: %v %+v", refused, leader, err, r)
	}
	md, err := m.p.admin(m.cl.Broker(1), admin).Metadata(ctx(t), refused)
	if err != nil {
		t.Fatal(err)
	}
	m.ids[refused] = md.Topics[refused].ID
	waitFor(t, "the leader opens "+refused, func() bool {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(refused)
		req.Topics = append(req.Topics, rt)
		r := on[*kmsg.MetadataResponse](t, m.client(admin), leader, req).Topics[0]
		return r.ErrorCode == 0 && len(r.Partitions) == 1 && r.Partitions[0].Leader == leader && r.Partitions[0].ErrorCode == 0
	})
	hw := m.listOffsetsAt(admin, "fin-ledger")
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.MaxWaitMillis, req.MinBytes = -1, 1<<20, 15000, 1
	for _, topic := range []string{"fin-ledger", refused} {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, m.ids[topic]
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.FetchOffset = 1<<20, hw
		if topic == refused {
			rp.FetchOffset = 0
		}
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	done := make(chan *kmsg.FetchResponse, 1)
	go func() { done <- on[*kmsg.FetchResponse](t, m.client(alice), m.leaders["fin-ledger"], req) }()
	time.Sleep(300 * time.Millisecond) // let the fetch park; were it answered at once, it would miss the record
	to0 := m.p.as(m.cl.Broker(1), admin, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := to0.ProduceSync(ctx(t), &kgo.Record{Topic: "fin-ledger", Partition: 0, Value: []byte("late")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	var resp *kmsg.FetchResponse
	select {
	case resp = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the fetch did not return")
	}
	got := map[string]kmsg.FetchResponseTopicPartition{}
	for _, rt := range resp.Topics {
		got[rt.Topic] = rt.Partitions[0]
		if rt.Topic == "" {
			for name, id := range m.ids {
				if id == rt.TopicID {
					got[name] = rt.Partitions[0]
				}
			}
		}
	}
	if p := got[refused]; p.ErrorCode != taf {
		t.Errorf("%s: code %d, want TOPIC_AUTHORIZATION_FAILED", refused, p.ErrorCode)
	}
	if p := got["fin-ledger"]; p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Errorf("fin-ledger: code %d, %d bytes of records; want the record produced while the fetch waited", p.ErrorCode, len(p.RecordBatches))
	}
}

// listOffsetsAt is the high watermark of topic's partition 0.
func (m *matrix) listOffsetsAt(who, topic string) int64 {
	return m.latestOffset(who, topic).Offset
}
