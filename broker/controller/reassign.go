package controller

import (
	"fmt"
	"maps"
	"slices"
)

// Partition reassignment (KIP-455), as Kafka's ZooKeeper-mode controller
// moves a partition from its original replicas ORS to target replicas TRS
// (KafkaController.onPartitionReassignment):
//
//	start      RS = TRS + ORS (distinct, TRS first), adding AR = TRS - ORS,
//	           removing RR = ORS - TRS, written to the topic znode
//	           (partitions, adding_replicas, removing_replicas) with the
//	           state at leader epoch+1, in one fenced multi; LeaderAndIsr
//	           to every replica of RS (the new ones start following)
//	progress   the leader adds the new replicas to the ISR (AlterPartition);
//	           after each accepted AlterPartition, and at failover, every
//	           partition being moved whose TRS is in the ISR completes
//	complete   assignment TRS, no AR/RR; the ISR without RR; the leader
//	           stays if in TRS and live, else the first live ISR member of
//	           TRS (ReassignPartitionLeaderElection); epoch+1; topic znode
//	           and state in one multi; LeaderAndIsr to TRS, UpdateMetadata
//	           to all, StopReplica to RR, then StopReplica with delete
//	cancel     (target null) the target becomes ORS: the same steps undo
//	           the move; no move in progress: NO_REASSIGNMENT_IN_PROGRESS
//	replace    a new target while one is in progress: ORS is kept; the
//	           replicas added by the old move and not in the new RS are
//	           stopped and deleted; the same target again changes nothing
//
// A target that is empty, has duplicates or negative ids, or adds a
// broker that is not live: INVALID_REPLICA_ASSIGNMENT.

// Kafka error codes of AlterPartitionReassignments answers.
const (
	CodeInvalidReplicaAssignment  int16 = 39
	CodeNoReassignmentInProgress  int16 = 85
	CodeReassignmentInProgressErr int16 = 60
)

// Reassign asks for the move of Partition to Target (nil: cancel).
type Reassign struct {
	Partition PartitionID
	Target    []int32
}

// Reassignment is a partition being moved, as ListPartitionReassignments
// answers: its replicas RS and the replicas being added and removed.
type Reassignment struct {
	Partition PartitionID
	Replicas  []int32
	Adding    []int32
	Removing  []int32
}

// TopicWrite is a topic znode the controller rewrites (its assignment,
// with the moves in progress), in the step's multi.
type TopicWrite struct {
	Topic    string
	TopicID  [16]byte
	Replicas [][]int32         // by partition
	Adding   map[int32][]int32 // partitions being moved only
	Removing map[int32][]int32
}

// reassign is the event of an AlterPartitionReassignments request.
type reassign struct{ reqs []Reassign }

// reassignCheck completes the moves whose targets are in the ISR.
type reassignCheck struct{}

func (reassign) isEvent()      {}
func (reassignCheck) isEvent() {}

// moving reports whether p is being reassigned.
func (p *Partition) moving() bool { return len(p.Adding) > 0 || len(p.Removing) > 0 }

// origin is ORS: the replicas without those being added.
func (p *Partition) origin() []int32 {
	return slices.DeleteFunc(slices.Clone(p.Replicas), func(r int32) bool { return slices.Contains(p.Adding, r) })
}

// target is TRS: the replicas without those being removed.
func (p *Partition) target() []int32 {
	return slices.DeleteFunc(slices.Clone(p.Replicas), func(r int32) bool { return slices.Contains(p.Removing, r) })
}

// reassignStep decides reqs; the answers are kept for takeReassign.
func (c *Core) reassignStep(reqs []Reassign) Effects {
	var eff Effects
	c.reassigned = make([]PartitionResult, 0, len(reqs))
	for _, r := range reqs {
		code, msg := c.startMove(&eff, r)
		c.reassigned = append(c.reassigned, PartitionResult{Partition: r.Partition, Error: code, Message: msg})
	}
	return eff
}

// startMove validates one move and starts it (or completes it at once
// when its target is in the ISR already).
func (c *Core) startMove(eff *Effects, r Reassign) (int16, string) {
	p := c.parts[r.Partition]
	if p == nil {
		return CodeUnknownTopicOrPartition, "The partition does not exist."
	}
	target := r.Target
	if target == nil {
		if !p.moving() {
			return CodeNoReassignmentInProgress, fmt.Sprintf("Unable to cancel the reassignment of %s-%d: no reassignment is in progress.", r.Partition.Topic, r.Partition.Partition)
		}
		target = p.origin()
	}
	if msg := c.invalidTarget(p, target); msg != "" {
		return CodeInvalidReplicaAssignment, msg
	}
	if p.moving() && slices.Equal(target, p.target()) {
		return CodeNone, "" // asked again (the znode re-read): under way
	}
	origin, oldAdding := p.origin(), p.Adding
	rs := slices.Clone(target)
	for _, o := range origin {
		if !slices.Contains(rs, o) {
			rs = append(rs, o)
		}
	}
	p.Replicas = rs
	p.Adding = minus(target, origin)
	p.Removing = minus(origin, target)
	// Replicas the replaced move added that the new one does not keep.
	for _, a := range oldAdding {
		if !slices.Contains(rs, a) {
			c.removeReplicaData(a, r.Partition)
		}
	}
	c.writeTopic(eff, r.Partition.Topic)
	if !p.HasState || c.completeMove(eff, r.Partition) {
		return CodeNone, ""
	}
	// Every replica of RS hears of it (the new ones start following).
	c.write(eff, r.Partition, LeaderAndISR{Leader: p.State.Leader, LeaderEpoch: p.State.LeaderEpoch + 1, ISR: p.State.ISR})
	return CodeNone, ""
}

// invalidTarget is Kafka's validateReassignment: why target is refused
// ("" when it is not).
func (c *Core) invalidTarget(p *Partition, target []int32) string {
	seen := map[int32]bool{}
	for _, r := range target {
		if r < 0 {
			return fmt.Sprintf("Invalid broker id in replica list: %v", target)
		}
		if seen[r] {
			return fmt.Sprintf("Duplicate replica ids in partition reassignment replica list: %v", target)
		}
		seen[r] = true
	}
	switch {
	case len(target) == 0:
		return "Empty replica list specified in partition reassignment."
	case slices.ContainsFunc(minus(target, p.origin()), func(r int32) bool { return !c.isRegistered(r) }):
		return fmt.Sprintf("Replica assignment has brokers that are not alive. Replica list: %v, live broker list: %v",
			target, slices.Sorted(maps.Keys(c.live)))
	}
	return ""
}

// completeMove finishes id's move if its target is in the ISR and one
// of it can lead; it reports whether it did.
func (c *Core) completeMove(eff *Effects, id PartitionID) bool {
	p := c.parts[id]
	target := p.target()
	if !p.HasState || slices.ContainsFunc(target, func(r int32) bool { return !slices.Contains(p.State.ISR, r) }) {
		return false
	}
	cur := p.State
	leader := cur.Leader
	if !slices.Contains(target, leader) || !c.isLive(leader) {
		leader = NoLeader
		for _, r := range target {
			if c.isLive(r) {
				leader = r
				break
			}
		}
		if leader == NoLeader {
			return false
		}
	}
	removing := p.Removing
	isr := slices.DeleteFunc(slices.Clone(cur.ISR), func(r int32) bool { return !slices.Contains(target, r) })
	p.Replicas, p.Adding, p.Removing = target, nil, nil
	c.write(eff, id, LeaderAndISR{Leader: leader, LeaderEpoch: cur.LeaderEpoch + 1, ISR: isr})
	c.writeTopic(eff, id.Topic)
	for _, r := range removing {
		c.removeReplicaData(r, id)
	}
	eff.Completed = append(eff.Completed, id)
	return true
}

// reassignProgress completes every move whose target is in the ISR.
func (c *Core) reassignProgress(eff *Effects) {
	for _, id := range c.sortedIDs() {
		if c.parts[id].moving() {
			c.completeMove(eff, id)
		}
	}
}

// removeReplicaData stops broker's replica of id and deletes its data
// (Kafka's OfflineReplica then ReplicaDeletionStarted); a broker that is
// down is told when it registers again (strays).
func (c *Core) removeReplicaData(broker int32, id PartitionID) {
	if !c.isRegistered(broker) {
		if !slices.Contains(c.strays[broker], id) {
			c.strays[broker] = append(c.strays[broker], id)
		}
		return
	}
	c.batch.stop(broker, id)
	c.batch.remove(broker, id)
}

// deleteStrays tells a broker that registered the replicas moves removed
// from it while it was down to delete their data.
func (c *Core) deleteStrays(b *batch, broker int32) {
	for _, id := range c.strays[broker] {
		if p := c.parts[id]; p == nil || !slices.Contains(p.Replicas, broker) {
			b.remove(broker, id)
		}
	}
	delete(c.strays, broker)
}

// writeTopic records that topic's znode is to be rewritten from what Core
// knows now (one write per topic per step, the last decision's).
func (c *Core) writeTopic(eff *Effects, topic string) {
	tw := TopicWrite{Topic: topic, Adding: map[int32][]int32{}, Removing: map[int32][]int32{}}
	for _, id := range c.sortedIDs() {
		if id.Topic != topic {
			continue
		}
		p := c.parts[id]
		tw.TopicID = p.TopicID
		tw.Replicas = append(tw.Replicas, slices.Clone(p.Replicas))
		if len(p.Adding) > 0 {
			tw.Adding[id.Partition] = slices.Clone(p.Adding)
		}
		if len(p.Removing) > 0 {
			tw.Removing[id.Partition] = slices.Clone(p.Removing)
		}
	}
	if i := slices.IndexFunc(eff.Topics, func(w TopicWrite) bool { return w.Topic == topic }); i >= 0 {
		eff.Topics[i] = tw
		return
	}
	eff.Topics = append(eff.Topics, tw)
}

// Reassignments are the moves in progress among ids (nil: all).
func (c *Core) Reassignments(ids []PartitionID) []Reassignment {
	if ids == nil {
		ids = c.sortedIDs()
	}
	var out []Reassignment
	for _, id := range ids {
		if p := c.parts[id]; p != nil && p.moving() {
			out = append(out, Reassignment{Partition: id, Replicas: slices.Clone(p.Replicas),
				Adding: slices.Clone(p.Adding), Removing: slices.Clone(p.Removing)})
		}
	}
	return out
}

// takeReassign returns the answers of the last reassignStep; false when
// this broker is no longer the controller.
func (c *Core) takeReassign() ([]PartitionResult, bool) {
	r := c.reassigned
	c.reassigned = nil
	return r, c.active && r != nil
}

func minus(a, b []int32) []int32 {
	var out []int32
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// AlterReassignments runs reqs through the loop: the answers, one per
// request in order (Error CodeNone: started, or done); ok is false when
// this broker is not the controller.
func (c *Controller) AlterReassignments(done <-chan struct{}, reqs []Reassign) (results []PartitionResult, ok bool) {
	c.submit(done, true, func() Event {
		c.step(reassign{reqs}, false)
		results, ok = c.core.takeReassign()
		if ok {
			c.step(reassignCheck{}, false)
		}
		return nil
	})
	return results, ok
}

// ListReassignments answers ListPartitionReassignments (nil ids: all);
// ok is false when this broker is not the controller.
func (c *Controller) ListReassignments(done <-chan struct{}, ids []PartitionID) (out []Reassignment, ok bool) {
	c.submit(done, true, func() Event {
		if ok = c.isActive(); ok {
			out = c.core.Reassignments(ids)
		}
		return nil
	})
	return out, ok
}
