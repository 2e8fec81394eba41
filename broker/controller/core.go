package controller

import (
	"maps"
	"slices"
	"sort"
	"time"
)

// PartitionID names a partition.
type PartitionID struct {
	Topic     string
	Partition int32
}

// Partition is what the controller knows of one partition.
type Partition struct {
	Replicas []int32 // assignment order
	State    LeaderAndISR
	// HasState is false until the partition has a state znode (or one is
	// being written by the current step).
	HasState bool
	// ZkVersion is the state znode's version, the CAS token of the next
	// write; -1 when the state znode is still to be created.
	ZkVersion int32
	// Unclean is the topic's unclean.leader.election.enable.
	Unclean bool
	// TopicID is the topic's id (the topic znode's topic_id).
	TopicID [16]byte
	// Adding and Removing are the replicas being added and removed by a
	// reassignment in progress (reassign.go); Replicas is then RS.
	Adding, Removing []int32
}

// StateWrite is one partition state the controller wants in ZooKeeper: a
// create when ZkVersion is -1, else a set at ZkVersion.
type StateWrite struct {
	Partition PartitionID
	State     LeaderAndISR
	ZkVersion int32
}

// Effects is what one step asks of the loop, in order: the writes, in
// one multi fenced by /controller_epoch's version; then, once they
// landed, the requests that tell the brokers (sends.go).
type Effects struct {
	Writes []StateWrite
	// Topics are the topic znodes to rewrite, in the same multi
	// (reassignments).
	Topics []TopicWrite
	// Completed are the partitions whose reassignment completed: the
	// loop takes them out of /admin/reassign_partitions.
	Completed []PartitionID
	// Deletes are the topics whose deletion completed: the loop deletes
	// their znodes (deletion.go).
	Deletes []string
	Sends   []Send
}

// Config is the part of the broker's configuration the decisions use.
type Config struct {
	// BrokerID is this broker's id, the controller_id of its requests.
	BrokerID int32
	// Listener is the inter-broker listener's name (the live leaders of
	// LeaderAndIsr are given on it).
	Listener string
	// ISRIsLive makes a new partition's ISR every live replica. It is
	// false while followers do not replicate (the ISR is the leader), so
	// that no election can pick a replica without the data.
	ISRIsLive bool
	// AutoRebalance is auto.leader.rebalance.enable (true): the loop
	// steps RebalanceCheck every RebalanceInterval
	// (leader.imbalance.check.interval.seconds, 300 s).
	AutoRebalance     bool
	RebalanceInterval time.Duration
	// ImbalancePercentage is leader.imbalance.per.broker.percentage (10).
	ImbalancePercentage int
}

// Core holds the controller's state and makes its decisions. It does no
// IO and reads no clock: events in, effects out (Step). Not safe for
// concurrent use: one goroutine, the loop's, owns it.
type Core struct {
	cfg    Config
	active bool
	// epoch and epochZkVersion are /controller_epoch's value and version
	// after this broker's election. Invariant: meaningful iff active.
	epoch, epochZkVersion int32
	// live maps each registered broker to its epoch (the czxid of
	// /brokers/ids/{id}).
	live  map[int32]int64
	parts map[PartitionID]*Partition
	// shuttingDown are the live brokers in a controlled shutdown: never
	// elected (shutdown.go). Invariant: a subset of live's keys.
	shuttingDown map[int32]bool
	// batch collects the requests of the step being taken (sends.go);
	// nil between steps.
	batch *batch
	// alter is the answer of the AlterPartition being stepped (alter.go);
	// nil otherwise.
	alter *alterState
	// election is the answer of the ElectLeaders being stepped
	// (preferred.go); nil otherwise.
	election *electState
	// reassigned are the answers of the AlterPartitionReassignments being
	// stepped (reassign.go); nil otherwise.
	reassigned []PartitionResult
	// deleting are the topics being deleted (deletion.go); their
	// partitions are not in parts.
	deleting map[string]*deletion
	// strays are the replicas moves removed from brokers that were down,
	// to delete when they register again (reassign.go).
	strays map[int32][]PartitionID
}

// NewCore returns an inactive controller.
func NewCore(cfg Config) *Core {
	return &Core{cfg: cfg, live: map[int32]int64{}, parts: map[PartitionID]*Partition{}, shuttingDown: map[int32]bool{},
		deleting: map[string]*deletion{}, strays: map[int32][]PartitionID{}}
}

// Active reports whether this broker is the controller, and its epoch and
// the /controller_epoch version that fences its writes.
func (c *Core) Active() (active bool, epoch, epochZkVersion int32) {
	return c.active, c.epoch, c.epochZkVersion
}

// Partition returns a copy of what the controller knows of p.
func (c *Core) Partition(p PartitionID) (Partition, bool) {
	part, ok := c.parts[p]
	if !ok {
		return Partition{}, false
	}
	out := *part
	out.Replicas = slices.Clone(part.Replicas)
	out.State.ISR = slices.Clone(part.State.ISR)
	out.Adding, out.Removing = slices.Clone(part.Adding), slices.Clone(part.Removing)
	return out, true
}

// isLive reports whether id can be elected: registered and not shutting
// down (Kafka's liveBrokerIds).
func (c *Core) isLive(id int32) bool { _, ok := c.live[id]; return ok && !c.shuttingDown[id] }

// write records that p should have state s, in eff (one write per
// partition per step: a second decision of the same step replaces the
// first and keeps its CAS version) and, provisionally, in Core, so that
// later decisions of the step build on it. StatesWritten then records the
// new versions; a write that fails makes the loop re-read the topics.
func (c *Core) write(eff *Effects, id PartitionID, s LeaderAndISR) {
	p := c.parts[id]
	s.ControllerEpoch = c.epoch
	s.ISR = slices.Clone(s.ISR)
	c.batch.written(id, p.ZkVersion < 0)
	if i := slices.IndexFunc(eff.Writes, func(w StateWrite) bool { return w.Partition == id }); i >= 0 {
		eff.Writes[i].State = s
	} else {
		eff.Writes = append(eff.Writes, StateWrite{Partition: id, State: s, ZkVersion: p.ZkVersion})
	}
	p.State, p.HasState = s, true
}

// sortedIDs returns the partitions in a stable order, so that effects are
// deterministic (tests compare them).
func (c *Core) sortedIDs() []PartitionID {
	ids := slices.Collect(maps.Keys(c.parts))
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Topic != ids[j].Topic {
			return ids[i].Topic < ids[j].Topic
		}
		return ids[i].Partition < ids[j].Partition
	})
	return ids
}
