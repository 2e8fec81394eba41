package controller

import "slices"

// Event is an input of Core.Step.
type Event interface{ isEvent() }

// Elected: this broker won /controller with epoch, and /controller_epoch
// is now at epochZkVersion. Brokers and Topics are the failover read: the
// live brokers with their epochs and every topic's partitions.
type Elected struct {
	Epoch, EpochZkVersion int32
	Brokers               map[int32]int64
	Topics                []TopicRead
}

// Resigned: this broker is no longer the controller (its session
// expired, /controller names another broker, or a write was fenced).
type Resigned struct{}

// BrokersChanged: /brokers/ids now holds these brokers, with their epochs.
type BrokersChanged struct{ Brokers map[int32]int64 }

// TopicRead is one topic as read from ZooKeeper; Deleted when it is gone.
type TopicRead struct {
	Topic      string
	TopicID    [16]byte
	Deleted    bool
	Unclean    bool
	Partitions []PartitionRead // by partition index
}

// PartitionRead is one partition's assignment and state znode (HasState
// false when it has none yet).
type PartitionRead struct {
	Replicas []int32
	// Adding and Removing are the topic znode's adding_replicas and
	// removing_replicas of the partition (a reassignment in progress).
	Adding, Removing []int32
	HasState         bool
	State            LeaderAndISR
	ZkVersion        int32
}

// TopicsChanged: topics were (re)read from ZooKeeper; All when Topics
// are every topic (the others were deleted).
type TopicsChanged struct {
	Topics []TopicRead
	All    bool
}

// StatesWritten: the writes of the last step landed, with these new
// state znode versions (one per write).
type StatesWritten struct {
	Writes   []StateWrite
	Versions []int32
}

func (Elected) isEvent()        {}
func (Resigned) isEvent()       {}
func (BrokersChanged) isEvent() {}
func (TopicsChanged) isEvent()  {}
func (StatesWritten) isEvent()  {}

// step applies ev and returns the state writes it decided (Step adds the
// requests to send). An inactive controller tracks nothing and asks for
// nothing.
func (c *Core) step(ev Event) Effects {
	switch ev := ev.(type) {
	case Elected:
		c.active, c.epoch, c.epochZkVersion = true, ev.Epoch, ev.EpochZkVersion
		c.live, c.parts, c.deleting = map[int32]int64{}, map[PartitionID]*Partition{}, map[string]*deletion{}
		for id, e := range ev.Brokers {
			c.live[id] = e
		}
		c.readTopics(ev.Topics)
		var eff Effects
		// Replicas of brokers that died while no controller watched
		// leave leadership and the ISRs (Kafka's replica state machine
		// startup moves them to OfflineReplica).
		if dead := c.deadReplicas(); len(dead) > 0 {
			c.offline(&eff, dead)
		}
		c.online(&eff)
		c.reassignProgress(&eff) // moves a previous controller left
		return eff
	case Resigned:
		*c = *NewCore(c.cfg)
		return Effects{}
	}
	if !c.active {
		return Effects{}
	}
	switch ev := ev.(type) {
	case BrokersChanged:
		return c.brokersChanged(ev.Brokers)
	case alterPartition:
		return c.alterStep(ev.req)
	case electLeaders:
		return c.electStep(ev.req)
	case DeleteTopics:
		var eff Effects
		c.startDeletions(&eff, ev.Topics)
		return eff
	case StopReplicaAnswered:
		var eff Effects
		c.stopAnswered(&eff, ev)
		return eff
	case reassign:
		return c.reassignStep(ev.reqs)
	case reassignCheck:
		var eff Effects
		c.reassignProgress(&eff)
		return eff
	case RebalanceCheck:
		return c.rebalance(c.cfg.ImbalancePercentage)
	case TopicsChanged:
		if ev.All {
			c.parts = map[PartitionID]*Partition{}
		}
		c.forgetDeletions(ev.Topics, ev.All)
		c.readTopics(ev.Topics)
		var eff Effects
		c.online(&eff)
		return eff
	case StatesWritten:
		for i, w := range ev.Writes {
			if p := c.parts[w.Partition]; p != nil {
				p.ZkVersion = ev.Versions[i]
			}
		}
		c.alterWritten(ev.Writes, ev.Versions)
		c.electWritten(ev.Writes)
	}
	return Effects{}
}

// deadReplicas is every broker that leads or is in the ISR of a
// partition and is not live, sorted.
func (c *Core) deadReplicas() []int32 {
	var out []int32
	for _, p := range c.parts {
		if !p.HasState {
			continue
		}
		for _, id := range append([]int32{p.State.Leader}, p.State.ISR...) {
			if id != NoLeader && !c.isLive(id) && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// readTopics replaces what the controller knows of the topics read.
func (c *Core) readTopics(ts []TopicRead) {
	for _, t := range ts {
		if c.deleting[t.Topic] != nil {
			continue // out of leadership until its znodes are gone
		}
		for id := range c.parts {
			if id.Topic == t.Topic {
				delete(c.parts, id)
			}
		}
		if t.Deleted {
			continue
		}
		for i, pr := range t.Partitions {
			p := &Partition{Replicas: slices.Clone(pr.Replicas), ZkVersion: -1, Unclean: t.Unclean, TopicID: t.TopicID,
				Adding: slices.Clone(pr.Adding), Removing: slices.Clone(pr.Removing)}
			if pr.HasState {
				p.State, p.ZkVersion, p.HasState = pr.State, pr.ZkVersion, true
				p.State.ISR = slices.Clone(pr.State.ISR)
			}
			c.parts[PartitionID{t.Topic, int32(i)}] = p
		}
	}
}

// brokersChanged handles brokers that left, came, or bounced (registered
// again with a newer epoch: a failure followed by a startup, as Kafka's
// controller treats it).
func (c *Core) brokersChanged(now map[int32]int64) Effects {
	var gone []int32
	for id, e := range c.live {
		if ne, ok := now[id]; !ok || ne != e {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	var eff Effects
	for _, id := range gone {
		delete(c.live, id)
	}
	if len(gone) > 0 {
		c.offline(&eff, gone)
	}
	c.live = map[int32]int64{}
	for id, e := range now {
		c.live[id] = e
	}
	// Partitions left without a leader (or a state) may be electable now.
	c.online(&eff)
	return eff
}

// offline moves leadership off the dead brokers (electing the first live
// ISR member) and takes them out of every ISR, never emptying one, in one
// leader epoch bump per partition.
func (c *Core) offline(eff *Effects, dead []int32) {
	for _, id := range c.sortedIDs() {
		p := c.parts[id]
		if !p.HasState {
			continue
		}
		base, cur, changed := p.State, p.State, false
		if cur.Leader != NoLeader && !c.isLive(cur.Leader) {
			if next, ok := electOffline(p.Replicas, cur, c.isLive, p.Unclean); ok {
				cur, changed = next, true
			}
		}
		for _, d := range dead {
			if next, ok := removeReplica(cur, d); ok {
				cur, changed = next, true
			}
		}
		if changed {
			cur.LeaderEpoch = base.LeaderEpoch + 1
			c.write(eff, id, cur)
		}
	}
}

// online gives a state to partitions that lack one and a leader to those
// without a live one, where some replica is eligible.
func (c *Core) online(eff *Effects) {
	for _, id := range c.sortedIDs() {
		p := c.parts[id]
		if !p.HasState {
			if s, ok := NewPartitionState(p.Replicas, c.isLive, c.cfg.ISRIsLive, c.epoch); ok {
				c.write(eff, id, s)
			}
			continue
		}
		if c.isLive(p.State.Leader) {
			continue
		}
		if s, ok := electOffline(p.Replicas, p.State, c.isLive, p.Unclean); ok {
			c.write(eff, id, s)
		}
	}
}
