package broker

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/kproto"
)

// The group coordinator: classic consumer groups (Kafka's
// GroupCoordinator), with committed offsets, group membership and the
// group metadata record kept in ZooKeeper (group_store.go,
// group_records.go); __consumer_offsets carries a copy of each. A
// group's membership is a pure state machine (group_machine.go,
// group_state.go, group_sync.go) run by a shell (group_shell.go) that
// owns the lock, the timers and the waiting requests; the /ids and
// /owners mirror is group_mirror.go.
//
// Which broker coordinates a group: the leader of the group's partition
// of __consumer_offsets (offsets_topic.go; FindCoordinator answers it;
// every other broker answers NOT_COORDINATOR). A group's in-memory state
// is loaded from ZooKeeper when its partition's leadership comes here
// (COORDINATOR_LOAD_IN_PROGRESS meanwhile, group_load.go) or when first
// touched, its generation and
// protocol from the group metadata znode (group_records.go), and dropped
// when the partition's leadership leaves this broker or changes epoch,
// so a coordinator that moved away and back does not serve stale state. The offsets of a group that
// is idle here (Empty, nobody committing through this broker) are
// re-read from ZooKeeper when fetched (refreshIdle, group_store.go): the
// ZooKeeper-coordinated consumer commits straight into ZooKeeper.
//
// Locks: coordinator.mu guards the map only; group.mu guards one group's
// state. Neither is held across ZooKeeper IO: commits build their multi
// under group.mu, run it unlocked and apply the result under group.mu
// again (by znode mzxid, so memory ends where ZooKeeper ends); the
// membership mirror (/ids, /owners) is written by one ordered worker
// (mirror) from snapshots. The machine's timers (session, pending member,
// join phase, sync) are time.AfterFunc callbacks of the shell that take
// group.mu and pass the machine the timer's sequence number, so a stale
// timer does nothing.

// Error codes kproto does not name.
const (
	codeOffsetMetadataTooLarge = 12
	codeGroupSubscribedToTopic = 86
	codeGroupMaxSizeReached    = int16(kproto.CodeGroupMaxSizeReached)
)

func ec(c kproto.ErrorCode) int16 { return int16(c) }

type groupState int8

const (
	groupEmpty groupState = iota
	groupPreparingRebalance
	groupCompletingRebalance
	groupStable
	groupDead
)

func (s groupState) String() string {
	return [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}[s]
}

type coordinator struct {
	b      *Broker
	cfg    GroupConfig
	mirror *mirror
	now    func() time.Time // the groups' clock

	mu struct {
		sync.Mutex
		groups map[string]*group
		// loaded: offsets partition → the leader epoch whose load ran
		// or runs; listing: closed once the load has listed
		// /consumers; loading: the epoch whose groups are being loaded
		// (their requests answer COORDINATOR_LOAD_IN_PROGRESS).
		// group_load.go.
		loaded, loading map[int32]int32
		listing         map[int32]chan struct{}
	}
}

func newCoordinator(b *Broker) *coordinator {
	c := &coordinator{b: b, cfg: b.cfg.Groups, now: time.Now}
	c.cfg.fillDefaults()
	c.mu.groups = map[string]*group{}
	c.mu.loading, c.mu.loaded = map[int32]int32{}, map[int32]int32{}
	c.mu.listing = map[int32]chan struct{}{}
	c.mirror = newMirror(b)
	return c
}

// start launches the mirror worker and the expiry loop.
func (c *coordinator) start() {
	c.b.goTracked("group-mirror", c.mirror.run)
	c.b.goTracked("group-expiry", c.expiryLoop)
}

// stop fails every waiting join and sync (Shutdown) and stops timers.
func (c *coordinator) stop() {
	c.mu.Lock()
	groups := make([]*group, 0, len(c.mu.groups))
	for _, g := range c.mu.groups {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	for _, g := range groups {
		g.mu.Lock()
		g.failWaiters(ec(kproto.CodeNotCoordinator))
		g.stopTimers()
		out := g.takeLocked()
		g.mu.Unlock()
		g.finish(out)
	}
}

func (c *coordinator) newGroup(name string) *group {
	mc := machineConfig{initialRebalanceDelay: c.cfg.InitialRebalanceDelay, maxSize: c.cfg.MaxSize}
	return &group{co: c, name: name,
		groupMachine: newGroupMachine(mc, newMemberID, c.b.log.With("group", name), time.Now()),
		offsets:      map[topicPartition]*committedOffset{}, znodes: map[string]bool{},
		waiters: map[replyTo]chan kmsg.Response{}, timers: map[timerKey]shellTimer{}, metaVersion: -1}
}

// unload forgets a group this broker no longer coordinates: waiters get
// NOT_COORDINATOR and the mirror removes the ephemerals it wrote.
func (c *coordinator) unload(name string) {
	c.mu.Lock()
	g := c.mu.groups[name]
	delete(c.mu.groups, name)
	c.mu.Unlock()
	if g == nil {
		return
	}
	g.mu.Lock()
	out := g.dieLocked(ec(kproto.CodeNotCoordinator))
	g.mu.Unlock()
	g.finish(out)
	c.mirror.forget(name)
}

// remove drops a dead group from the map.
func (c *coordinator) remove(g *group) {
	c.mu.Lock()
	if c.mu.groups[g.name] == g {
		delete(c.mu.groups, g.name)
	}
	c.mu.Unlock()
}

// loadedGroups returns the groups in memory.
func (c *coordinator) loadedGroups() []*group {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*group, 0, len(c.mu.groups))
	for _, g := range c.mu.groups {
		out = append(out, g)
	}
	return out
}

type topicPartition struct {
	topic     string
	partition int32
}

type committedOffset struct {
	offset      int64
	leaderEpoch int32 // -1 when none
	metadata    string
	commitTime  time.Time
	hasMeta     bool  // /offset-metadata/{t}/{p} exists
	mzxid       int64 // of the offsets znode at our last write (0: created)
}

// group is one consumer group: its membership state machine
// (groupMachine, embedded: group_machine.go) driven by the shell
// (group_shell.go), and its committed offsets (group_store.go). Every
// field below co and name is guarded by mu.
type group struct {
	co   *coordinator
	name string

	mu sync.Mutex
	groupMachine

	offsets map[topicPartition]*committedOffset
	znodes  map[string]bool // offset parents known to exist
	// offsetsSeq counts changes of offsets made here (commits, deletes),
	// so a reload from ZooKeeper that raced one is not applied.
	offsetsSeq uint64

	epoch int32 // of the offsets partition's leadership it was loaded in
	// metaVersion is the group-metadata znode's version this coordinator
	// last read or wrote (-1: none), group_records.go.
	metaVersion int32
	stored      *kmsg.GroupMetadataValue // read at load, until restoreMembersLocked

	// The shell's side of the machine: requests parked in it, by the
	// replyTo the machine knows them by, and its armed timers.
	waiters    map[replyTo]chan kmsg.Response
	nextWaiter replyTo
	timers     map[timerKey]shellTimer

	// commitQueue holds OffsetCommits waiting for the multi in flight;
	// committing is set while commitLoop runs (group_store.go).
	commitQueue []*commitBatch
	committing  bool

	// metaMu orders the group metadata writes (held across ZooKeeper IO,
	// never with mu held); metaDone is the metaSeq last stored.
	metaMu   sync.Mutex
	metaDone uint64
}

// newMemberID is Kafka's clientId-UUID (instanceId-UUID for static).
func newMemberID(prefix string) string {
	u := zkmeta.NewUUID()
	return fmt.Sprintf("%s-%08x-%04x-%04x-%04x-%012x", prefix, binary.BigEndian.Uint32(u[0:4]),
		binary.BigEndian.Uint16(u[4:6]), binary.BigEndian.Uint16(u[6:8]), binary.BigEndian.Uint16(u[8:10]), u[10:16])
}

// hasCommits reports whether the group has committed offsets.
func (g *group) hasCommitsLocked() bool { return len(g.offsets) > 0 }

// subscribedTopicsLocked is the union of the members' subscriptions, when
// the protocol type is "consumer" and the metadata decodes; ok is false
// when it cannot be known.
func (g *group) subscribedTopicsLocked() (map[string]bool, bool) {
	if g.protocolType != "consumer" || g.protocol == "" {
		return nil, false
	}
	out := map[string]bool{}
	for _, m := range g.members {
		var md kmsg.ConsumerMemberMetadata
		if err := md.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return nil, false
		}
		for _, t := range md.Topics {
			out[t] = true
		}
	}
	return out, true
}
