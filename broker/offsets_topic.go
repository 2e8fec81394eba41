package broker

import (
	"strconv"

	"github.com/zkafka/zkafka/internal/javahash"
	"github.com/zkafka/zkafka/kproto"
)

// The internal topic __consumer_offsets and who coordinates a group
// (Kafka's GroupMetadataManager.partitionFor and the topic's creation in
// AutoTopicCreationManager).
//
// The topic is created on the first FindCoordinator, with
// offsets.topic.num.partitions partitions (50) and
// offsets.topic.replication.factor replicas (3; capped at the live
// brokers with a warning, where Kafka answers COORDINATOR_NOT_AVAILABLE
// until enough brokers are up), compacted, as Kafka's offsets topic
// configs. A group's coordinator is the leader of partition
// abs(String.hashCode(group.id)) % partitions: this broker coordinates
// the group exactly while its replica of that partition is leader
// (applyTopic gives the role; offsetsLeadershipChanged unloads the
// groups of a partition that stopped leading here). ZooKeeper stays the
// store of record; the topic carries a copy of every commit and
// rebalance in Kafka's record formats (group_records.go).

const offsetsTopic = "__consumer_offsets"

// kafkaAbs is Kafka's Utils.abs: Integer.MIN_VALUE maps to 0.
func kafkaAbs(n int32) int32 {
	if n == -1<<31 {
		return 0
	}
	if n < 0 {
		return -n
	}
	return n
}

// offsetsPartitionOf is the __consumer_offsets partition of group given n
// partitions.
func offsetsPartitionOf(group string, n int) int32 {
	return kafkaAbs(javahash.String(group)) % int32(n)
}

// offsetsPartitionFor is group's partition of the topic as this broker
// knows it; ok false when the topic does not exist here.
func (b *Broker) offsetsPartitionFor(group string) (*topic, int32, bool) {
	t := b.cluster.topic(offsetsTopic)
	if t == nil || len(t.replicas) == 0 {
		return nil, 0, false
	}
	return t, offsetsPartitionOf(group, len(t.replicas)), true
}

// coordinatorEpoch reports whether this broker coordinates group (leads
// its offsets partition), and the partition's leader epoch, which names
// the term: a group loaded in another epoch is stale.
func (b *Broker) coordinatorEpoch(group string) (int32, bool) {
	t, p, ok := b.offsetsPartitionFor(group)
	if !ok {
		return 0, false
	}
	part := t.partition(p)
	if part == nil || !part.isLeader() {
		return 0, false
	}
	return part.leaderEpoch.Load(), true
}

// coordinates reports whether this broker coordinates group.
func (b *Broker) coordinates(group string) bool {
	_, ok := b.coordinatorEpoch(group)
	return ok
}

// coordinatorFor is the broker FindCoordinator names for group: the
// leader of its offsets partition in the metadata cache. The code is
// COORDINATOR_NOT_AVAILABLE while the topic is being created or the
// partition has no live leader.
func (b *Broker) coordinatorFor(group string) (brokerInfo, kproto.ErrorCode) {
	_, parts, ok := b.meta.topic(offsetsTopic)
	if !ok || len(parts) == 0 {
		b.ensureOffsetsTopic()
		return brokerInfo{}, kproto.CodeCoordinatorNotAvailable
	}
	leader := parts[offsetsPartitionOf(group, len(parts))].leader
	br, ok := b.meta.broker(leader)
	if leader < 0 || !ok || !b.meta.isLive(leader) {
		return brokerInfo{}, kproto.CodeCoordinatorNotAvailable
	}
	return br, kproto.CodeNone
}

// ensureOffsetsTopic creates __consumer_offsets if it does not exist.
func (b *Broker) ensureOffsetsTopic() {
	if b.cluster.topic(offsetsTopic) != nil {
		return
	}
	cfg := b.cfg.Groups
	n, rf := cfg.OffsetsTopicPartitions, cfg.OffsetsTopicReplicationFactor
	if n <= 0 {
		n = DefaultGroupConfig().OffsetsTopicPartitions
	}
	if rf <= 0 {
		rf = DefaultGroupConfig().OffsetsTopicReplicationFactor
	}
	if live := len(b.cluster.liveBrokers()); int(rf) > live && live > 0 {
		b.log.Warn("fewer live brokers than offsets.topic.replication.factor; creating "+offsetsTopic+" with fewer replicas",
			"offsets.topic.replication.factor", rf, "live_brokers", live)
		rf = int16(live)
	}
	configs := map[string]string{
		"cleanup.policy":   "compact",
		"compression.type": "producer",
		"segment.bytes":    strconv.Itoa(int(cfg.OffsetsTopicSegmentBytes)),
	}
	_, err := b.createTopic(topicSpec{name: offsetsTopic, partitions: n, rf: rf, configs: configs}, false)
	if err != nil {
		if code, _ := codeOf(err); code != kproto.CodeTopicAlreadyExists {
			b.log.Warn("creating "+offsetsTopic, "err", err)
		}
	}
}

// offsetsLeadershipChanged unloads the groups of the offsets partitions
// this broker no longer leads, so they answer NOT_COORDINATOR and the
// next leader loads them from ZooKeeper; the groups of partitions that
// now lead here are loaded in the background (startLoads,
// group_load.go). Called by applyTopic with cluster.applyMu held, after
// the roles are given.
func (c *coordinator) offsetsLeadershipChanged(t *topic) {
	for _, g := range c.loadedGroups() {
		p := offsetsPartitionOf(g.name, len(t.parts))
		if part := t.parts[p]; part != nil && part.isLeader() && part.leaderEpoch.Load() == g.epoch {
			continue
		}
		c.b.log.Info("group coordinator moved away", "group", g.name, "partition", p)
		c.unload(g.name)
	}
	c.startLoads(t)
}
