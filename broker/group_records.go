package broker

import (
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// A group's metadata (generation, protocol, leader, members and their
// assignments) where the next coordinator finds it, and the copies of
// commits and rebalances in __consumer_offsets.
//
//	/consumers/{group}/group-metadata    persistent: Kafka's GroupMetadataValue v3, binary
//
// The znode is written at each rebalance completion (the join phase's
// end, before any member is told the new generation; the leader's
// assignment; the group falling Empty), by compare-and-set on the znode
// version this coordinator last wrote or read: a version that moved means
// another coordinator wrote the group since, and this one unloads it (its
// waiters get NOT_COORDINATOR) instead of answering with a generation
// that may be reused. A new coordinator starts from the stored generation,
// so a generation number a member was ever told is never handed out
// again.
//
// Each commit written to ZooKeeper and each stored group metadata is also
// appended to the group's partition of __consumer_offsets in Kafka's
// record formats (OffsetCommitKey v1 / OffsetCommitValue v3,
// GroupMetadataKey v2 / GroupMetadataValue v3; compaction keeps the last
// of each key), when this broker leads that partition, without waiting
// for followers: the topic is a copy for tools that read it; ZooKeeper is
// the store of record.

func groupMetadataPath(g string) string { return groupPath(g) + "/group-metadata" }

// groupMetadataLocked is the group's GroupMetadataValue v3. g.mu held.
func (g *group) groupMetadataLocked(now time.Time) []byte {
	v := kmsg.NewGroupMetadataValue()
	v.Version = 3
	v.ProtocolType, v.Generation = g.protocolType, g.generation
	if g.protocol != "" {
		v.Protocol = kmsg.StringPtr(g.protocol)
	}
	if g.leader != "" {
		v.Leader = kmsg.StringPtr(g.leader)
	}
	v.CurrentStateTimestamp = now.UnixMilli()
	for _, m := range g.members {
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID, vm.ClientID, vm.ClientHost = m.id, m.clientID, m.host
		if m.instanceID != "" {
			vm.InstanceID = kmsg.StringPtr(m.instanceID)
		}
		vm.RebalanceTimeoutMillis = int32(m.rebalanceTimeout.Milliseconds())
		vm.SessionTimeoutMillis = int32(m.sessionTimeout.Milliseconds())
		vm.Subscription, vm.Assignment = m.metadataFor(g.protocol), m.assignment
		if vm.Subscription == nil {
			vm.Subscription = []byte{}
		}
		if vm.Assignment == nil {
			vm.Assignment = []byte{}
		}
		v.Members = append(v.Members, vm)
	}
	return v.AppendTo(nil)
}

// loadGroupMetadata reads the stored generation and protocol type into
// g (just loaded, not yet published), and keeps the record for
// restoreMembersLocked.
func (c *coordinator) loadGroupMetadata(g *group) error {
	data, st, err := c.b.zk.Get(groupMetadataPath(g.name))
	if errors.Is(err, zk.ErrNoNode) {
		g.metaVersion = -1
		return nil
	} else if err != nil {
		return err
	}
	g.metaVersion = st.Version
	var v kmsg.GroupMetadataValue
	if err := v.ReadFrom(data); err != nil {
		c.b.log.Warn("ignoring unreadable group metadata", "group", g.name, "err", err)
		return nil
	}
	g.generation, g.protocolType = v.Generation, v.ProtocolType
	g.stored = &v
	return nil
}

// restoreMembersLocked gives a group just loaded by its new coordinator
// the members of its stored record (groupMachine.restore). g.mu held; g
// is not published yet (lookup).
func (g *group) restoreMembersLocked() {
	v := g.stored
	g.stored = nil
	if g.restore(v) {
		g.co.b.log.Info("group loaded with its members", "group", g.name, "generation", g.generation, "members", len(g.members))
	}
}

var errGroupMoved = errors.New("group metadata written by another coordinator")

// persistMetadata stores the group's metadata as of now, unless a write
// already covers the latest change. It is called without g.mu; metaMu
// orders one group's writes. On errGroupMoved the group is unloaded.
func (g *group) persistMetadata() error {
	g.mu.Lock()
	want := g.metaSeq
	g.mu.Unlock()
	g.metaMu.Lock()
	defer g.metaMu.Unlock()
	if g.metaDone >= want {
		return nil
	}
	now := time.Now()
	g.mu.Lock()
	seq, data, dead, version := g.metaSeq, g.groupMetadataLocked(now), g.state == groupDead, g.metaVersion
	g.mu.Unlock()
	if dead {
		return errGroupDead
	}
	z := g.co.b.zk
	var st *zk.Stat
	var err error
	if version < 0 {
		if err = z.Create(groupMetadataPath(g.name), data, 0); errors.Is(err, zk.ErrNoNode) {
			if err = g.co.mirror.ensurePath(groupPath(g.name)); err == nil {
				err = z.Create(groupMetadataPath(g.name), data, 0)
			}
		}
		if err == nil {
			st = &zk.Stat{Version: 0}
		}
	} else {
		st, err = z.Conn.Set(z.Path(groupMetadataPath(g.name)), data, version)
	}
	if errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNoNode) {
		g.co.b.log.Warn("group metadata changed under this coordinator; unloading the group", "group", g.name)
		g.co.unload(g.name)
		return errGroupMoved
	}
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.metaVersion = st.Version
	g.mu.Unlock()
	g.metaDone = seq
	key := kmsg.NewGroupMetadataKey()
	key.Version, key.Group = 2, g.name
	g.co.appendOffsetsRecords(g.name, now, [][2][]byte{{key.AppendTo(nil), data}})
	return nil
}

// persistMetadataAsync stores the metadata in the background (the
// leader's assignment, the group falling Empty: nobody waits on it).
func (g *group) persistMetadataAsync() {
	g.co.b.goTracked("group-metadata", func() {
		if err := g.persistMetadata(); err != nil && !errors.Is(err, errGroupDead) && !errors.Is(err, errGroupMoved) {
			g.co.b.log.Warn("storing group metadata", "group", g.name, "err", err)
		}
	})
}

// commitRecords appends ws to __consumer_offsets as Kafka's offset
// commit records.
func (g *group) commitRecords(ws []offsetWrite, now time.Time) {
	kvs := make([][2][]byte, 0, len(ws))
	for _, w := range ws {
		k := kmsg.NewOffsetCommitKey()
		k.Version, k.Group, k.Topic, k.Partition = 1, g.name, w.tp.topic, w.tp.partition
		v := kmsg.NewOffsetCommitValue()
		v.Version, v.Offset, v.LeaderEpoch, v.Metadata, v.CommitTimestamp = 3, w.offset, w.leaderEpoch, w.metadata, now.UnixMilli()
		kvs = append(kvs, [2][]byte{k.AppendTo(nil), v.AppendTo(nil)})
	}
	g.co.appendOffsetsRecords(g.name, now, kvs)
}

// appendOffsetsRecords appends one batch of key/value records to group's
// partition of __consumer_offsets if this broker leads it.
func (c *coordinator) appendOffsetsRecords(group string, now time.Time, kvs [][2][]byte) {
	t, p, ok := c.b.offsetsPartitionFor(group)
	if !ok || len(kvs) == 0 {
		return
	}
	part := t.partition(p)
	if part == nil {
		return
	}
	var recs []byte
	for i, kv := range kvs {
		recs = kproto.AppendRecord(recs, 0, int32(i), kv[0], kv[1], 0, nil)
	}
	ms := now.UnixMilli()
	batch := kproto.AppendBatch(nil, kproto.BatchHeader{LastOffsetDelta: int32(len(kvs) - 1), FirstTimestamp: ms,
		MaxTimestamp: ms, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: int32(len(kvs))}, recs)
	if res := part.appendBatch(kproto.Batch(batch), now); res.code != kproto.CodeNone {
		c.b.log.Debug("appending to "+offsetsTopic, "group", group, "partition", p, "code", res.code)
	}
}

// offsetTombstones appends null values for the offset commit keys of
// tps (offsets deleted or expired), so compaction drops them, as Kafka.
func (g *group) offsetTombstones(tps []topicPartition) {
	kvs := make([][2][]byte, 0, len(tps))
	for _, tp := range tps {
		k := kmsg.NewOffsetCommitKey()
		k.Version, k.Group, k.Topic, k.Partition = 1, g.name, tp.topic, tp.partition
		kvs = append(kvs, [2][]byte{k.AppendTo(nil), nil})
	}
	g.co.appendOffsetsRecords(g.name, time.Now(), kvs)
}

// groupTombstones appends null values for a deleted group's offsets and
// its group metadata key.
func (g *group) groupTombstones() {
	g.mu.Lock()
	tps := make([]topicPartition, 0, len(g.offsets))
	for tp := range g.offsets {
		tps = append(tps, tp)
	}
	g.mu.Unlock()
	g.offsetTombstones(tps)
	k := kmsg.NewGroupMetadataKey()
	k.Version, k.Group = 2, g.name
	g.co.appendOffsetsRecords(g.name, time.Now(), [][2][]byte{{k.AppendTo(nil), nil}})
}
