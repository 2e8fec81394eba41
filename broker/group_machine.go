package broker

import (
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The classic group protocol as a pure state machine, in the shape of
// etcd raft's RawNode: groupMachine holds one group's membership and
// does no IO. It takes inputs (join, sync, heartbeat, leave, an offset
// commit's member check, a timer that fired), each with the time now,
// and appends outputs to out: replies to parked requests, timers to arm
// or cancel, and ZooKeeper writes to make (the group metadata record,
// the /ids and /owners mirror). The shell (group_shell.go) owns the
// mutex, the real timers and the waiting connections; it drains out
// after every input and is the one place replies are sent. The script
// tests (group_machine_test.go, testdata/group/) drive the machine with a
// fake clock.
//
//	Empty ──join──► PreparingRebalance ──all joined / rebalance timeout──► CompletingRebalance
//	  ▲                 ▲        ▲                                              │ leader's SyncGroup
//	  │ last member     │        └──── join, leave, session or sync expiry ───┤
//	  │ leaves          └───────────── join (new or changed), leave, expiry ── Stable
//	Dead: deleted (DeleteGroups, expiry) or no longer coordinated here.
//
// The semantics are Kafka 3.7's GroupCoordinator and GroupMetadata; the
// input functions name the Kafka functions they follow.

// newMemberJoinTimeout bounds how long a new member's first join may
// wait (Kafka's NewMemberJoinTimeoutMs): its socket is muted while it
// waits, so a client that gave up would otherwise stay a member.
const newMemberJoinTimeout = 5 * time.Minute

// replyTo names a request parked in the machine until its answer is
// ready (the shell maps it to the waiting connection); 0 is none.
type replyTo uint64

type timerKind int8

const (
	timerSession timerKind = iota // a member's session (heartbeat) expiry
	timerPending                  // a member id handed out with MEMBER_ID_REQUIRED
	timerJoin                     // the join phase's end: rebalance timeout or initial delay
	timerSync                     // members that have not sent SyncGroup (Kafka's DelayedSync)
)

func (k timerKind) String() string {
	return [...]string{"session", "pending", "join", "sync"}[k]
}

// timerKey names one timer of a group; member is "" for the group's own.
type timerKey struct {
	kind   timerKind
	member string
}

// groupEffects are the machine's outputs since the shell last drained
// them.
type groupEffects struct {
	joins  []joinReply
	syncs  []syncReply
	timers []timerOp // in order: a timer may be armed and cancelled in one step
	// store: the group metadata changed (metaSeq moved) and is to be
	// written; members, owners: the /ids, /owners mirror is to be
	// republished from the group as it is.
	store, members, owners bool
}

type joinReply struct {
	to   replyTo
	resp *kmsg.JoinGroupResponse
}

type syncReply struct {
	to   replyTo
	resp *kmsg.SyncGroupResponse
}

// timerOp (re)arms key to fire after d, or (stop) cancels it; a fire
// carrying another seq than the last arm's is stale and ignored.
type timerOp struct {
	key   timerKey
	stop  bool
	seq   uint64
	after time.Duration
}

// machineConfig is the part of GroupConfig the machine uses.
type machineConfig struct {
	initialRebalanceDelay time.Duration
	maxSize               int32 // 0: unlimited
}

// groupMachine is one group's membership state. It is not safe for
// concurrent use: the shell calls it with group.mu held.
type groupMachine struct {
	cfg   machineConfig
	newID func(prefix string) string // a new member id (Kafka's clientId-UUID)
	log   *slog.Logger

	state        groupState
	protocolType string
	protocol     string
	generation   int32
	leader       string // member id; "" when none
	// Invariant: members holds every member of the current generation and
	// those that joined during a rebalance; static maps instance ids to
	// member ids of members.
	members map[string]*groupMember
	// pending are member ids handed out with MEMBER_ID_REQUIRED that have
	// not joined yet; each expires after its session timeout.
	pending map[string]bool
	static  map[string]string
	// pendingSync are members told the current generation that have not
	// sent SyncGroup; they are removed when the sync timer fires.
	pendingSync map[string]bool
	emptySince  time.Time
	nextOrder   uint64

	// initialDelay is set while the first rebalance of an Empty group
	// waits for more members (group.initial.rebalance.delay.ms);
	// delayJoined records a member joining a generation-0 group meanwhile
	// and delayRemaining what is left of the rebalance timeout.
	initialDelay   bool
	delayJoined    bool
	delayRemaining time.Duration

	// metaSeq counts changes of the group metadata to store.
	metaSeq uint64

	timers   map[timerKey]uint64 // armed timers and their seq
	timerSeq uint64
	out      groupEffects
}

type groupMember struct {
	id, instanceID   string
	clientID, host   string
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocolType     string
	protocols        []kmsg.JoinGroupRequestProtocol
	assignment       []byte
	join             replyTo // a JoinGroup awaiting its response
	sync             replyTo // a SyncGroup awaiting its response
	isNew            bool    // joined, not yet told a generation
	joinVersion      int16
	order            uint64 // join order; the first joined leads
}

func newGroupMachine(cfg machineConfig, newID func(string) string, log *slog.Logger, now time.Time) groupMachine {
	return groupMachine{cfg: cfg, newID: newID, log: log,
		members: map[string]*groupMember{}, pending: map[string]bool{}, static: map[string]string{},
		pendingSync: map[string]bool{}, timers: map[timerKey]uint64{}, emptySince: now}
}

// drain returns the outputs so far and clears them.
func (m *groupMachine) drain() groupEffects {
	out := m.out
	m.out = groupEffects{}
	return out
}

func (m *groupMachine) arm(k timerKey, d time.Duration) {
	m.timerSeq++
	m.timers[k] = m.timerSeq
	m.out.timers = append(m.out.timers, timerOp{key: k, seq: m.timerSeq, after: d})
}

func (m *groupMachine) cancel(k timerKey) {
	if _, ok := m.timers[k]; ok {
		delete(m.timers, k)
		m.out.timers = append(m.out.timers, timerOp{key: k, stop: true})
	}
}

func (m *groupMachine) metaChanged() {
	m.metaSeq++
	m.out.store = true
}

func (m *groupMachine) replyJoin(to replyTo, r *kmsg.JoinGroupResponse) {
	if to != 0 {
		m.out.joins = append(m.out.joins, joinReply{to, r})
	}
}

func (m *groupMachine) replySync(to replyTo, r *kmsg.SyncGroupResponse) {
	if to != 0 {
		m.out.syncs = append(m.out.syncs, syncReply{to, r})
	}
}

func joinError(memberID string, code int16) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.ErrorCode, r.MemberID, r.Generation = code, memberID, -1
	return r
}

func syncError(code int16) *kmsg.SyncGroupResponse {
	r := kmsg.NewPtrSyncGroupResponse()
	r.ErrorCode = code
	return r
}

// answerJoin answers mem's parked join, if any.
func (m *groupMachine) answerJoin(mem *groupMember, r *kmsg.JoinGroupResponse) {
	if mem.join != 0 {
		m.replyJoin(mem.join, r)
		mem.join = 0
	}
}

// answerSync answers mem's parked sync, if any.
func (m *groupMachine) answerSync(mem *groupMember, r *kmsg.SyncGroupResponse) {
	if mem.sync != 0 {
		m.replySync(mem.sync, r)
		mem.sync = 0
	}
}

// fire is the input of a timer that went off; a stale one does nothing.
func (m *groupMachine) fire(now time.Time, k timerKey, seq uint64) {
	if cur, ok := m.timers[k]; !ok || cur != seq {
		return
	}
	delete(m.timers, k)
	switch k.kind {
	case timerSession:
		m.sessionExpired(now, k.member)
	case timerPending:
		if m.pending[k.member] {
			delete(m.pending, k.member)
			if m.state == groupPreparingRebalance {
				m.tryCompleteJoin(now)
			}
		}
	case timerJoin:
		m.joinTimeout(now)
	case timerSync:
		m.syncTimeout(now)
	}
}

// die answers every parked request with code, stops the timers and
// leaves the group Dead (deleted, expired, or coordinated elsewhere).
func (m *groupMachine) die(code int16) {
	m.failWaiters(code)
	m.stopTimers()
	m.state = groupDead
}

// failWaiters answers every parked join and sync with code.
func (m *groupMachine) failWaiters(code int16) {
	for _, mem := range m.sortedMembers() {
		m.answerJoin(mem, joinError(mem.id, code))
		m.answerSync(mem, syncError(code))
	}
}

// stopTimers cancels every timer and forgets pending member ids.
func (m *groupMachine) stopTimers() {
	for _, k := range m.sortedTimers() {
		m.cancel(k)
	}
	clear(m.pending)
}

// sortedMembers is members in join order, so outputs come in an order
// the scripts can pin.
func (m *groupMachine) sortedMembers() []*groupMember {
	out := make([]*groupMember, 0, len(m.members))
	for _, mem := range m.members {
		out = append(out, mem)
	}
	slices.SortFunc(out, func(a, b *groupMember) int { return cmpUint(a.order, b.order) })
	return out
}

func (m *groupMachine) sortedTimers() []timerKey {
	out := make([]timerKey, 0, len(m.timers))
	for k := range m.timers {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b timerKey) int {
		if a.kind != b.kind {
			return int(a.kind) - int(b.kind)
		}
		return cmpString(a.member, b.member)
	})
	return out
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (mem *groupMember) metadataFor(protocol string) []byte {
	for _, p := range mem.protocols {
		if p.Name == protocol {
			return p.Metadata
		}
	}
	return nil
}

func sameProtocols(a, b []kmsg.JoinGroupRequestProtocol) bool {
	return slices.EqualFunc(a, b, func(x, y kmsg.JoinGroupRequestProtocol) bool {
		return x.Name == y.Name && string(x.Metadata) == string(y.Metadata)
	})
}

func hasProtocol(mem *groupMember, name string) bool {
	for _, p := range mem.protocols {
		if p.Name == name {
			return true
		}
	}
	return false
}
