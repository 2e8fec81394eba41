package controller

import (
	"maps"
	"slices"
)

// Topic deletion (Kafka's TopicDeletionManager): a topic marked in
// /admin/delete_topics leaves leadership at once (UpdateMetadata with
// leader -2 to every broker, no more elections), and each of its replicas
// gets StopReplica with delete. The topic's znodes are deleted only when
// every replica answered it without error: a replica whose broker is down
// (or that failed) waits, and gets StopReplica with delete again when its
// broker registers again.
//
//	DeleteTopics{t}            t leaves Core's partitions; every replica pending
//	StopReplicaAnswered{B, …}  B's replicas answered without error are done
//	broker B starts            StopReplica with delete of B's pending replicas
//	no replica pending         Effects.Deletes: the loop deletes t's znodes
//	t's znode gone (re-read)   t is forgotten

// DeleteTopics: /admin/delete_topics lists these topics.
type DeleteTopics struct{ Topics []string }

// StopReplicaAnswered: broker answered a StopReplica (Error is the
// request's error; Results each partition's).
type StopReplicaAnswered struct {
	Broker  int32
	Error   int16
	Results []StopResult
}

// StopResult is one partition's StopReplica answer.
type StopResult struct {
	Partition PartitionID
	Error     int16
}

func (DeleteTopics) isEvent()        {}
func (StopReplicaAnswered) isEvent() {}

// deletion is a topic being deleted.
type deletion struct {
	// pending are the replicas that have not yet answered StopReplica
	// with delete without error, by broker.
	pending map[int32][]PartitionID
	// completing is set once the znode deletion was asked for.
	completing bool
}

// replica identifies one replica of a partition.
func (d *deletion) done(broker int32, id PartitionID) {
	d.pending[broker] = slices.DeleteFunc(d.pending[broker], func(p PartitionID) bool { return p == id })
	if len(d.pending[broker]) == 0 {
		delete(d.pending, broker)
	}
}

// startDeletions takes the topics named out of leadership and records
// their replicas as pending; Step sends UpdateMetadata (leader -2) and
// StopReplica with delete to the live replicas (the partitions left).
func (c *Core) startDeletions(eff *Effects, names []string) {
	for _, name := range names {
		if c.deleting[name] != nil {
			continue
		}
		d := &deletion{pending: map[int32][]PartitionID{}}
		for _, id := range c.sortedIDs() {
			if id.Topic != name {
				continue
			}
			for _, r := range c.parts[id].Replicas {
				d.pending[r] = append(d.pending[r], id)
			}
			delete(c.parts, id)
		}
		c.deleting[name] = d
		c.maybeComplete(eff, name) // no replicas (or no znode): at once
	}
}

// stopAnswered marks the replicas broker deleted.
func (c *Core) stopAnswered(eff *Effects, ev StopReplicaAnswered) {
	if ev.Error != CodeNone {
		return
	}
	for _, r := range ev.Results {
		if d := c.deleting[r.Partition.Topic]; d != nil && r.Error == CodeNone {
			d.done(ev.Broker, r.Partition)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.deleting)) {
		c.maybeComplete(eff, name)
	}
}

// maybeComplete asks for the deletion of name's znodes once no replica is
// pending.
func (c *Core) maybeComplete(eff *Effects, name string) {
	if d := c.deleting[name]; d != nil && len(d.pending) == 0 && !d.completing {
		d.completing = true
		eff.Deletes = append(eff.Deletes, name)
	}
}

// resumeDeletions resends StopReplica with delete of broker's pending
// replicas (it started, or registered again).
func (c *Core) resumeDeletions(b *batch, broker int32) {
	for _, name := range slices.Sorted(maps.Keys(c.deleting)) {
		for _, id := range c.deleting[name].pending[broker] {
			b.remove(broker, id)
		}
	}
}

// forgetDeletions drops the deletions whose topic is gone from what was
// read (all: ts are every topic).
func (c *Core) forgetDeletions(ts []TopicRead, all bool) {
	present := map[string]bool{}
	for _, t := range ts {
		if t.Deleted {
			delete(c.deleting, t.Topic)
		} else {
			present[t.Topic] = true
		}
	}
	if all {
		for name := range c.deleting {
			if !present[name] {
				delete(c.deleting, name)
			}
		}
	}
}

// Deleting reports whether topic is being deleted, and the brokers whose
// replicas have not answered yet.
func (c *Core) Deleting(topic string) (brokers []int32, ok bool) {
	d := c.deleting[topic]
	if d == nil {
		return nil, false
	}
	return slices.Sorted(maps.Keys(d.pending)), true
}
