package broker

import (
	"errors"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/kproto"
)

// Loading groups from ZooKeeper. When this broker becomes the leader of
// a partition of __consumer_offsets (offsetsLeadershipChanged), the
// groups of that partition are loaded in the background, as Kafka's
// GroupMetadataManager loads the partition; until the load ends, their
// requests answer COORDINATOR_LOAD_IN_PROGRESS (retriable: clients back
// off and retry) instead of waiting on ZooKeeper on a connection's
// reader. Heartbeats answer NONE meanwhile, as Kafka's do. The load
// first lists /consumers; a request arriving during that one read waits
// for it, and only partitions that have groups are then loading (a new
// cluster's first groups never see the error). A group the load did not
// find (created since, or its load failed) is loaded when first touched
// (lookup).

// lookup returns the group if this broker coordinates it, loading it from
// ZooKeeper when it is not in memory. With create, a missing group is
// created Empty. The code is NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS
// (its partition is being loaded), COORDINATOR_NOT_AVAILABLE (ZooKeeper
// failed) or 0; g is nil when the group does not exist.
func (c *coordinator) lookup(name string, create bool) (*group, int16) {
	epoch, ok := c.b.coordinatorEpoch(name)
	if !ok {
		c.unload(name)
		return nil, ec(kproto.CodeNotCoordinator)
	}
	_, p, _ := c.b.offsetsPartitionFor(name)
	c.mu.Lock()
	listed := c.mu.listing[p]
	c.mu.Unlock()
	if listed != nil {
		// One ZooKeeper read tells whether the partition has groups to
		// load.
		select {
		case <-listed:
		case <-c.b.done:
			return nil, ec(kproto.CodeNotCoordinator)
		}
	}
	c.mu.Lock()
	g := c.mu.groups[name]
	loading, isLoading := c.mu.loading[p]
	c.mu.Unlock()
	if isLoading && loading == epoch && (g == nil || g.loadedEpoch() != epoch) {
		return nil, ec(kproto.CodeCoordinatorLoadInProgress)
	}
	return c.lookupIn(name, create, epoch)
}

func (g *group) loadedEpoch() int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.epoch
}

// lookupIn is lookup for the partition's leader epoch epoch.
func (c *coordinator) lookupIn(name string, create bool, epoch int32) (*group, int16) {
	c.mu.Lock()
	g := c.mu.groups[name]
	c.mu.Unlock()
	if g != nil {
		g.mu.Lock()
		stale := g.epoch != epoch && g.state != groupDead
		g.mu.Unlock()
		if !stale {
			return g, 0
		}
		// Loaded in an earlier term of the partition here: what the
		// coordinators in between wrote is in ZooKeeper.
		c.unload(name)
	}
	loaded, err := c.loadGroup(name)
	if err != nil {
		c.b.log.Warn("loading group from ZooKeeper", "group", name, "err", err)
		return nil, ec(kproto.CodeCoordinatorNotAvailable)
	}
	if loaded == nil {
		if !create {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.mu.groups[name], 0
		}
		loaded = c.newGroup(name)
	}
	loaded.epoch = epoch
	loaded.mu.Lock()
	loaded.restoreMembersLocked()
	loaded.mu.Unlock()
	c.mu.Lock()
	g = c.mu.groups[name]
	if g == nil {
		c.mu.groups[name] = loaded
	}
	c.mu.Unlock()
	if g != nil { // loaded meanwhile by another request
		return g, 0
	}
	loaded.mu.Lock()
	out := loaded.takeLocked() // restored: its timers, /ids and /owners
	loaded.mu.Unlock()
	loaded.finish(out)
	return loaded, 0
}

// startLoads begins loading the groups of the offsets partitions this
// broker now leads in a new epoch (t is __consumer_offsets) and forgets
// the loads of those it no longer leads. Called by
// offsetsLeadershipChanged.
func (c *coordinator) startLoads(t *topic) {
	todo := map[int32]int32{}
	listed := make(chan struct{})
	c.mu.Lock()
	for p, part := range t.parts {
		p := int32(p)
		if part == nil || !part.isLeader() {
			delete(c.mu.loaded, p)
			delete(c.mu.loading, p)
			continue
		}
		epoch := part.leaderEpoch.Load()
		if e, ok := c.mu.loaded[p]; ok && e == epoch {
			continue
		}
		c.mu.loaded[p] = epoch
		c.mu.listing[p] = listed
		todo[p] = epoch
	}
	c.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	if !c.b.goTracked("group-load", func() { c.loadPartitions(todo, listed) }) {
		c.listed(todo, listed, nil)
	}
}

// listed ends the listing of the partitions in todo; those with groups
// in names (partition → groups) are loading from now on.
func (c *coordinator) listed(todo map[int32]int32, ch chan struct{}, names map[int32][]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, e := range todo {
		if c.mu.listing[p] == ch {
			delete(c.mu.listing, p)
		}
		if len(names[p]) > 0 && c.mu.loaded[p] == e {
			c.mu.loading[p] = e
		}
	}
	close(ch)
}

// loadPartitions loads every group of the partitions in todo
// (partition → epoch), then lets their requests in. Only partitions
// that have groups answer COORDINATOR_LOAD_IN_PROGRESS, once /consumers
// is listed: a new cluster's first groups never wait.
func (c *coordinator) loadPartitions(todo map[int32]int32, ch chan struct{}) {
	all, err := c.b.zk.Children("/consumers")
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		c.b.log.Warn("loading groups from ZooKeeper", "partitions", len(todo), "err", err)
	}
	names := map[int32][]string{}
	for _, name := range all {
		if _, p, ok := c.b.offsetsPartitionFor(name); ok {
			if _, mine := todo[p]; mine {
				names[p] = append(names[p], name)
			}
		}
	}
	c.listed(todo, ch, names)
	defer c.loadsDone(todo)
	n := 0
	for p, want := range todo {
		for _, name := range names[p] {
			if epoch, ok := c.b.coordinatorEpoch(name); !ok || epoch != want {
				break // moved on meanwhile
			}
			if g, code := c.lookupIn(name, false, want); code == 0 && g != nil {
				n++
			}
		}
	}
	if n > 0 {
		c.b.log.Info("loaded groups of "+offsetsTopic, "partitions", len(todo), "groups", n)
	}
}

func (c *coordinator) loadsDone(todo map[int32]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, e := range todo {
		if c.mu.loading[p] == e {
			delete(c.mu.loading, p)
		}
	}
}
