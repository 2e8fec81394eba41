package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// The group machine (group_machine.go) after the join phase: SyncGroup,
// heartbeats, offset commits' member check, and members leaving or
// expiring. Kafka 3.7's GroupCoordinator handleSyncGroup,
// handleHeartbeat, handleLeaveGroup, validateOffsetCommit and
// onExpireHeartbeat.

// syncInput is one SyncGroup.
type syncInput struct {
	memberID, instanceID   string
	generation             int32
	protocolType, protocol *string // v5+; nil: not sent
	assignments            []kmsg.SyncGroupRequestGroupAssignment
}

// sync is Kafka's doSyncGroup. The answer, now or when the leader's
// assignment arrives, is a reply to to.
func (m *groupMachine) sync(now time.Time, s syncInput, to replyTo) {
	if code := m.validateSync(s); code != 0 {
		m.replySync(to, syncError(code))
		return
	}
	mem := m.members[s.memberID]
	switch m.state {
	case groupEmpty:
		m.replySync(to, syncError(ec(kproto.CodeUnknownMemberID)))
	case groupPreparingRebalance:
		m.replySync(to, syncError(ec(kproto.CodeRebalanceInProgress)))
	case groupStable:
		m.synced(mem.id)
		m.arm(timerKey{timerSession, mem.id}, mem.sessionTimeout)
		m.replySync(to, m.syncResponse(mem))
	case groupCompletingRebalance:
		m.answerSync(mem, syncError(ec(kproto.CodeRebalanceInProgress))) // superseded
		mem.sync = to
		m.synced(mem.id)
		m.arm(timerKey{timerSession, mem.id}, mem.sessionTimeout)
		if mem.id == m.leader {
			m.assign(s.assignments)
		}
	}
}

func (m *groupMachine) validateSync(s syncInput) int16 {
	if m.state == groupDead {
		return ec(kproto.CodeCoordinatorNotAvailable)
	}
	if code := m.validateMember(s.memberID, s.instanceID); code != 0 {
		return code
	}
	switch {
	case s.generation != m.generation:
		return ec(kproto.CodeIllegalGeneration)
	case s.protocolType != nil && *s.protocolType != m.protocolType,
		s.protocol != nil && *s.protocol != m.protocol:
		return ec(kproto.CodeInconsistentGroupProtocol)
	}
	return 0
}

// assign takes the leader's assignment: the group is Stable and every
// parked sync is answered. Members the leader left out get an empty
// assignment.
func (m *groupMachine) assign(as []kmsg.SyncGroupRequestGroupAssignment) {
	for _, a := range as {
		if o := m.members[a.MemberID]; o != nil {
			o.assignment = a.MemberAssignment
		}
	}
	m.state = groupStable
	for _, o := range m.sortedMembers() {
		if o.sync != 0 {
			m.answerSync(o, m.syncResponse(o))
			m.arm(timerKey{timerSession, o.id}, o.sessionTimeout)
		}
	}
	m.out.owners = true
	m.metaChanged()
}

// synced: id sent its SyncGroup; when all have, the sync timer stops.
func (m *groupMachine) synced(id string) {
	delete(m.pendingSync, id)
	if len(m.pendingSync) == 0 {
		m.cancel(timerKey{timerSync, ""})
	}
}

func (m *groupMachine) syncResponse(mem *groupMember) *kmsg.SyncGroupResponse {
	r := kmsg.NewPtrSyncGroupResponse()
	r.ProtocolType, r.Protocol = kmsg.StringPtr(m.protocolType), kmsg.StringPtr(m.protocol)
	r.MemberAssignment = mem.assignment
	return r
}

// syncTimeout: members told the generation did not sync within the
// rebalance timeout; they are removed and the group rebalances (Kafka's
// onExpirePendingSync).
func (m *groupMachine) syncTimeout(now time.Time) {
	if m.state != groupCompletingRebalance && m.state != groupStable || len(m.pendingSync) == 0 {
		return
	}
	for _, mem := range m.sortedMembers() {
		if m.pendingSync[mem.id] {
			m.removeMember(mem.id)
		}
	}
	m.out.members = true
	m.prepareRebalance(now, "members did not sync in time")
}

// heartbeat is Kafka's handleHeartbeat once the group exists.
func (m *groupMachine) heartbeat(memberID, instanceID string, generation int32) int16 {
	if m.state == groupDead {
		return ec(kproto.CodeCoordinatorNotAvailable)
	}
	if code := m.validateMember(memberID, instanceID); code != 0 {
		return code
	}
	if generation != m.generation {
		return ec(kproto.CodeIllegalGeneration)
	}
	mem := m.members[memberID]
	switch m.state {
	case groupEmpty:
		return ec(kproto.CodeUnknownMemberID)
	case groupPreparingRebalance:
		m.arm(timerKey{timerSession, mem.id}, mem.sessionTimeout)
		return ec(kproto.CodeRebalanceInProgress)
	}
	m.arm(timerKey{timerSession, mem.id}, mem.sessionTimeout)
	return 0
}

// commitCheck is Kafka's validateOffsetCommit and the state check of
// doCommitOffsets: generation -1 with no member id commits into an Empty
// group (admin tools, assign()-mode consumers); members commit in their
// generation, also while a rebalance is prepared (eager consumers commit
// before they rejoin), but not while the group waits for the leader's
// assignment. A member's commit counts as a heartbeat.
func (m *groupMachine) commitCheck(memberID, instanceID string, generation int32) int16 {
	if m.state == groupDead {
		return ec(kproto.CodeCoordinatorNotAvailable)
	}
	if generation >= 0 || memberID != "" || instanceID != "" {
		if code := m.validateMember(memberID, instanceID); code != 0 {
			return code
		}
		if generation != m.generation {
			return ec(kproto.CodeIllegalGeneration)
		}
	} else if m.state != groupEmpty {
		return ec(kproto.CodeUnknownMemberID)
	}
	switch m.state {
	case groupCompletingRebalance:
		return ec(kproto.CodeRebalanceInProgress)
	case groupStable, groupPreparingRebalance:
		mem := m.members[memberID]
		m.arm(timerKey{timerSession, mem.id}, mem.sessionTimeout)
	}
	return 0
}

// leave removes one leaving member (Kafka's handleLeaveGroup, per
// member): by instance id alone (KIP-345 admin removal), a pending member
// id, or a member.
func (m *groupMachine) leave(now time.Time, memberID, instanceID, reason string) int16 {
	if memberID == "" {
		cur, ok := m.static[instanceID]
		if instanceID == "" || !ok {
			return ec(kproto.CodeUnknownMemberID)
		}
		m.memberGone(now, cur, reason)
		return 0
	}
	if m.pending[memberID] {
		delete(m.pending, memberID)
		m.cancel(timerKey{timerPending, memberID})
		if m.state == groupPreparingRebalance {
			m.tryCompleteJoin(now)
		}
		return 0
	}
	if code := m.validateMember(memberID, instanceID); code != 0 {
		return code
	}
	m.memberGone(now, memberID, reason)
	return 0
}

// sessionExpired is Kafka's onExpireHeartbeat: a new member whose first
// join outlived newMemberJoinTimeout, or a member that stopped
// heartbeating. Members waiting on the coordinator are kept alive.
func (m *groupMachine) sessionExpired(now time.Time, id string) {
	mem := m.members[id]
	if mem == nil {
		return
	}
	if !mem.isNew && (mem.join != 0 || mem.sync != 0) {
		m.arm(timerKey{timerSession, id}, mem.sessionTimeout)
		return
	}
	if m.log != nil {
		m.log.Info("group member session expired", "member", id)
	}
	m.memberGone(now, id, "member session expired")
}

// removeMember deletes a member, answering its parked requests with
// UNKNOWN_MEMBER_ID; it does not rebalance.
func (m *groupMachine) removeMember(id string) {
	mem := m.members[id]
	if mem == nil {
		return
	}
	m.cancel(timerKey{timerSession, id})
	m.answerJoin(mem, joinError(id, ec(kproto.CodeUnknownMemberID)))
	m.answerSync(mem, syncError(ec(kproto.CodeUnknownMemberID)))
	delete(m.members, id)
	delete(m.pendingSync, id)
	if mem.instanceID != "" && m.static[mem.instanceID] == id {
		delete(m.static, mem.instanceID)
	}
	if m.leader == id {
		m.leader = ""
	}
	m.out.members = true
}

// memberGone is Kafka's removeMemberAndUpdateGroup: a member left or
// expired; the group rebalances.
func (m *groupMachine) memberGone(now time.Time, id, reason string) {
	m.removeMember(id)
	switch m.state {
	case groupStable, groupCompletingRebalance:
		m.prepareRebalance(now, reason)
	case groupPreparingRebalance:
		if len(m.members) == 0 && len(m.pending) == 0 {
			m.completeJoin(now)
			return
		}
		m.tryCompleteJoin(now)
	}
}

// restore makes a group just loaded by its new coordinator Stable again
// with the members, protocol, leader and assignments of the stored
// record, as Kafka's GroupMetadataManager loads a group, when the record
// was written after the leader's assignment (every member has one);
// their heartbeats then go on in the same generation, with no rebalance.
// Otherwise (the record of a join phase, or of an Empty group) the group
// stays Empty at the stored generation: the members' heartbeats answer
// UNKNOWN_MEMBER_ID, they rejoin, and the rebalance starts the next
// generation. It reports whether the members were restored.
func (m *groupMachine) restore(v *kmsg.GroupMetadataValue) bool {
	if v == nil || v.Protocol == nil || v.Leader == nil || len(v.Members) == 0 {
		return false
	}
	for _, vm := range v.Members {
		if len(vm.Assignment) == 0 {
			return false
		}
	}
	m.protocol, m.leader = *v.Protocol, *v.Leader
	for _, vm := range v.Members {
		mem := &groupMember{id: vm.MemberID, clientID: vm.ClientID, host: vm.ClientHost,
			sessionTimeout:   time.Duration(vm.SessionTimeoutMillis) * time.Millisecond,
			rebalanceTimeout: time.Duration(vm.RebalanceTimeoutMillis) * time.Millisecond,
			protocolType:     v.ProtocolType, assignment: vm.Assignment,
			protocols: []kmsg.JoinGroupRequestProtocol{{Name: *v.Protocol, Metadata: vm.Subscription}}}
		if vm.InstanceID != nil {
			mem.instanceID = *vm.InstanceID
			m.static[mem.instanceID] = mem.id
		}
		m.nextOrder++
		mem.order = m.nextOrder
		m.members[mem.id] = mem
		m.arm(timerKey{timerSession, mem.id}, mem.sessionTimeout)
	}
	m.state = groupStable
	m.out.members, m.out.owners = true, true
	return true
}
