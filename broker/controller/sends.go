package controller

import (
	"maps"
	"slices"
	"sort"
)

// The requests the controller sends, decided by Core along with the
// writes (Kafka's ControllerBrokerRequestBatch): after each step the
// brokers hear of what changed, each in one request per kind, in the
// order LeaderAndIsr, UpdateMetadata, StopReplica.
//
//	election (failover)      LeaderAndIsr of every partition to its live replicas;
//	                         UpdateMetadata of every partition to every live broker
//	state written            LeaderAndIsr to the partition's live replicas (is_new
//	                         when the state znode was created); UpdateMetadata to all
//	new partition            (state written by CreateTopics) the same, is_new; one
//	                         without a state (no replica live) in UpdateMetadata only,
//	                         leader -1 (Kafka leaves it out until it has a leader)
//	broker started/bounced   UpdateMetadata of every partition to it, and LeaderAndIsr
//	                         of the partitions it hosts; UpdateMetadata (the new broker
//	                         list) to the others
//	broker died              UpdateMetadata (the broker list) to the live brokers
//	topic deleted            UpdateMetadata with leader -2 to all; StopReplica with
//	                         delete to its live replicas

// RequestKind names a controller request.
type RequestKind int

const (
	LeaderAndIsr   RequestKind = iota // key 4
	UpdateMetadata                    // key 6
	StopReplica                       // key 5
)

func (k RequestKind) String() string {
	return [...]string{"LeaderAndIsr", "UpdateMetadata", "StopReplica"}[k]
}

// Send is one request for one broker. The loop builds it from Core's
// state once the step's writes landed (so that it carries their zkVersions).
type Send struct {
	To   int32
	Kind RequestKind
	// Partitions are those whose current state the request carries
	// (LeaderAndIsr, UpdateMetadata), or those to stop (StopReplica).
	Partitions []PartitionID
	// New are the LeaderAndIsr partitions whose state was just created.
	New []PartitionID
	// Deleted are the UpdateMetadata partitions whose topic is gone
	// (sent with leader -2).
	Deleted []PartitionID
	// Delete makes StopReplica delete the partitions' data.
	Delete bool
	// All marks an UpdateMetadata of every partition (to a broker that
	// has to learn everything).
	All bool
}

// batch is what one step will send.
type batch struct {
	changed      map[PartitionID]bool           // partition → is_new, for all its live replicas
	leaderAndIsr map[int32]map[PartitionID]bool // broker → partition → is_new
	updated      map[PartitionID]bool           // partitions for every broker's UpdateMetadata
	fullUpdate   map[int32]bool                 // brokers that get every partition
	brokerList   bool                           // the live brokers changed: UpdateMetadata to all
	deleted      map[PartitionID][]int32        // deleted partitions and their replicas
	stopped      map[int32][]PartitionID        // StopReplica without delete, by broker
	removed      map[int32][]PartitionID        // StopReplica with delete (reassignment), by broker
}

// remove records a StopReplica with delete of id for broker (a replica
// a reassignment removed), sent after the one without delete.
func (b *batch) remove(broker int32, id PartitionID) {
	if b.removed == nil {
		b.removed = map[int32][]PartitionID{}
	}
	b.removed[broker] = append(b.removed[broker], id)
}

// stop records a StopReplica (no delete) of id for broker.
func (b *batch) stop(broker int32, id PartitionID) {
	if b.stopped == nil {
		b.stopped = map[int32][]PartitionID{}
	}
	b.stopped[broker] = append(b.stopped[broker], id)
}

func newBatch() *batch {
	return &batch{changed: map[PartitionID]bool{}, leaderAndIsr: map[int32]map[PartitionID]bool{}, updated: map[PartitionID]bool{},
		fullUpdate: map[int32]bool{}, deleted: map[PartitionID][]int32{}}
}

// written records that id's state was (provisionally) written this step.
func (b *batch) written(id PartitionID, created bool) {
	if b == nil {
		return
	}
	b.updated[id] = true
	b.changed[id] = created || b.changed[id]
}

func setAdd(m map[PartitionID]bool, id PartitionID, v bool) map[PartitionID]bool {
	if m == nil {
		m = map[PartitionID]bool{}
	}
	m[id] = v
	return m
}

// Step applies ev and returns what the loop must do: the writes, then
// the requests that tell the brokers what changed.
func (c *Core) Step(ev Event) Effects {
	beforeLive := maps.Clone(c.live)
	beforeParts := map[PartitionID][]int32{}
	for id, p := range c.parts {
		beforeParts[id] = p.Replicas
	}
	c.forgetShutdowns(ev)
	c.batch = newBatch()
	var eff Effects
	if cs, ok := ev.(ControlledShutdown); ok {
		eff = c.controlledShutdown(cs)
	} else {
		eff = c.step(ev)
	}
	b := c.batch
	c.batch = nil
	if !c.active {
		return eff
	}
	switch ev.(type) {
	case Elected:
		for id, p := range c.parts {
			if p.HasState {
				if _, ok := b.changed[id]; !ok {
					b.changed[id] = false // is_new only if created this step
				}
			}
		}
		for id := range c.live {
			b.fullUpdate[id] = true
		}
	case StatesWritten:
		return eff
	default:
		for id, e := range c.live {
			if be, ok := beforeLive[id]; !ok || be != e {
				c.brokerStarted(b, id)
			}
		}
		for id, e := range beforeLive {
			if ne, ok := c.live[id]; !ok || ne != e {
				b.brokerList = true
				c.replicasChanged(b, id)
			}
		}
		for id, p := range c.parts {
			if _, known := beforeParts[id]; !known {
				if p.HasState {
					b.changed[id] = true
				}
				b.updated[id] = true // stateless too: offline, leader -1
			}
		}
		for id, replicas := range beforeParts {
			if _, ok := c.parts[id]; !ok {
				b.deleted[id] = replicas
			}
		}
	}
	eff.Sends = c.sends(b)
	return eff
}

// brokerStarted: id registered (or registered again): it learns every
// partition, and the others the new broker list.
func (c *Core) brokerStarted(b *batch, id int32) {
	b.fullUpdate[id], b.brokerList = true, true
	c.resumeDeletions(b, id)
	c.deleteStrays(b, id)
	c.replicasChanged(b, id)
	for pid, p := range c.parts {
		if p.HasState && slices.Contains(p.Replicas, id) {
			b.leaderAndIsr[id] = setAdd(b.leaderAndIsr[id], pid, b.leaderAndIsr[id][pid])
		}
	}
}

// replicasChanged: broker id came or went, so the offline replicas of the
// partitions it hosts changed: every broker's UpdateMetadata carries them.
func (c *Core) replicasChanged(b *batch, id int32) {
	for pid, p := range c.parts {
		if slices.Contains(p.Replicas, id) {
			b.updated[pid] = true
		}
	}
}

// sends turns a batch into requests, per live broker in id order.
func (c *Core) sends(b *batch) []Send {
	// Partitions written or new go to each of their live replicas.
	for id, isNew := range b.changed {
		for _, r := range c.parts[id].Replicas {
			if c.isRegistered(r) {
				b.leaderAndIsr[r] = setAdd(b.leaderAndIsr[r], id, isNew || b.leaderAndIsr[r][id])
			}
		}
	}
	brokers := slices.Sorted(maps.Keys(c.live))
	updated, deleted := sortIDs(slices.Collect(maps.Keys(b.updated))), sortIDs(slices.Collect(maps.Keys(b.deleted)))
	var out []Send
	for _, to := range brokers {
		if parts := b.leaderAndIsr[to]; len(parts) > 0 {
			s := Send{To: to, Kind: LeaderAndIsr, Partitions: sortIDs(slices.Collect(maps.Keys(parts)))}
			for _, id := range s.Partitions {
				if parts[id] {
					s.New = append(s.New, id)
				}
			}
			out = append(out, s)
		}
		switch {
		case b.fullUpdate[to]:
			out = append(out, Send{To: to, Kind: UpdateMetadata, All: true, Deleted: deleted})
		case b.brokerList || len(updated) > 0 || len(deleted) > 0:
			out = append(out, Send{To: to, Kind: UpdateMetadata, Partitions: updated, Deleted: deleted})
		}
		var stop []PartitionID
		for _, id := range deleted {
			if slices.Contains(b.deleted[id], to) {
				stop = append(stop, id)
			}
		}
		if len(stop) > 0 {
			out = append(out, Send{To: to, Kind: StopReplica, Partitions: stop, Delete: true})
		}
		if len(b.stopped[to]) > 0 {
			out = append(out, Send{To: to, Kind: StopReplica, Partitions: b.stopped[to]})
		}
		if len(b.removed[to]) > 0 {
			out = append(out, Send{To: to, Kind: StopReplica, Partitions: b.removed[to], Delete: true})
		}
	}
	return out
}

func (c *Core) isRegistered(id int32) bool { _, ok := c.live[id]; return ok }

func sortIDs(ids []PartitionID) []PartitionID {
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Topic != ids[j].Topic {
			return ids[i].Topic < ids[j].Topic
		}
		return ids[i].Partition < ids[j].Partition
	})
	return ids
}

// Broker returns a live broker's epoch.
func (c *Core) Broker(id int32) (epoch int64, ok bool) {
	epoch, ok = c.live[id]
	return epoch, ok
}

// AllPartitions returns every partition, sorted.
func (c *Core) AllPartitions() []PartitionID { return c.sortedIDs() }
