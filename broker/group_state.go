package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// The join phase of the group machine (group_machine.go): JoinGroup, the
// rebalance it starts and the generation it ends with. Kafka 3.7's
// GroupCoordinator.handleJoinGroup and onCompleteJoin.

// joinInput is one validated JoinGroup (session timeout in range, group
// id set).
type joinInput struct {
	memberID, instanceID string
	clientID, host       string
	protocolType         string
	protocols            []kmsg.JoinGroupRequestProtocol
	session, rebalance   time.Duration
	version              int16 // v4+: MEMBER_ID_REQUIRED (KIP-394); v9+: SkipAssignment (KIP-814)
}

// join is Kafka's handleJoinGroup once the group exists. The answer, now
// or when the join phase ends, is a reply to to.
func (m *groupMachine) join(now time.Time, j joinInput, to replyTo) {
	switch {
	case !m.acceptJoining(j.memberID):
		m.removeMember(j.memberID)
		m.replyJoin(to, joinError("", codeGroupMaxSizeReached))
	case j.memberID == "":
		m.newMemberJoin(now, j, to)
	default:
		m.currentMemberJoin(now, j, to)
	}
	if m.state == groupPreparingRebalance {
		m.tryCompleteJoin(now)
	}
}

// acceptJoining is Kafka's acceptJoiningMember (group.max.size): while a
// rebalance is prepared the members already rejoined count, so the last
// to rejoin of an oversized group are shed; otherwise the members.
func (m *groupMachine) acceptJoining(id string) bool {
	if m.cfg.maxSize <= 0 {
		return true
	}
	mem := m.members[id]
	switch m.state {
	case groupPreparingRebalance:
		awaiting := 0
		for _, o := range m.members {
			if o.join != 0 {
				awaiting++
			}
		}
		return mem != nil && mem.join != 0 || int32(awaiting) < m.cfg.maxSize
	case groupCompletingRebalance, groupStable:
		return mem != nil || int32(len(m.members)) < m.cfg.maxSize
	default:
		return true
	}
}

// supportsProtocols: an Empty group takes any protocol type and set;
// otherwise the type must match and one protocol be every member's.
func (m *groupMachine) supportsProtocols(ptype string, protos []kmsg.JoinGroupRequestProtocol) bool {
	if m.state == groupEmpty {
		return ptype != "" && len(protos) > 0
	}
	if ptype != m.protocolType {
		return false
	}
	for _, p := range protos {
		all := true
		for _, mem := range m.members {
			if !hasProtocol(mem, p.Name) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// newMemberJoin is Kafka's doNewMemberJoinGroup: a join without a member
// id.
func (m *groupMachine) newMemberJoin(now time.Time, j joinInput, to replyTo) {
	switch {
	case m.state == groupDead:
		m.replyJoin(to, joinError("", ec(kproto.CodeCoordinatorNotAvailable)))
		return
	case !m.supportsProtocols(j.protocolType, j.protocols):
		m.replyJoin(to, joinError("", ec(kproto.CodeInconsistentGroupProtocol)))
		return
	}
	prefix := j.clientID
	if j.instanceID != "" {
		prefix = j.instanceID
	}
	id := m.newID(prefix)
	switch {
	case j.instanceID != "" && m.static[j.instanceID] != "":
		m.replaceStatic(now, j, id, to)
	case j.instanceID == "" && j.version >= 4:
		// KIP-394: the member must come back with this id.
		m.pending[id] = true
		m.arm(timerKey{timerPending, id}, j.session)
		m.replyJoin(to, joinError(id, ec(kproto.CodeMemberIDRequired)))
	default:
		m.addMember(now, j, id, to)
	}
}

// currentMemberJoin is Kafka's doCurrentMemberJoinGroup: a join with a
// member id.
func (m *groupMachine) currentMemberJoin(now time.Time, j joinInput, to replyTo) {
	switch {
	case m.state == groupDead:
		m.replyJoin(to, joinError(j.memberID, ec(kproto.CodeCoordinatorNotAvailable)))
		return
	case !m.supportsProtocols(j.protocolType, j.protocols):
		m.replyJoin(to, joinError(j.memberID, ec(kproto.CodeInconsistentGroupProtocol)))
		return
	case m.pending[j.memberID]:
		m.addMember(now, j, j.memberID, to)
		return
	}
	if code := m.validateMember(j.memberID, j.instanceID); code != 0 {
		m.replyJoin(to, joinError(j.memberID, code))
		return
	}
	mem := m.members[j.memberID]
	switch m.state {
	case groupPreparingRebalance:
		m.updateMember(mem, j, to)
	case groupCompletingRebalance:
		if sameProtocols(mem.protocols, j.protocols) {
			// A retried join (the answer was lost): the same answer again.
			m.replyJoin(to, m.joinResponse(mem, mem.id == m.leader))
			return
		}
		m.updateMember(mem, j, to)
		m.prepareRebalance(now, "member changed its protocols")
	case groupStable:
		if mem.id == m.leader || !sameProtocols(mem.protocols, j.protocols) {
			// The leader's join lets it rebalance for changes outside the
			// metadata (topics created, for the consumer).
			m.updateMember(mem, j, to)
			m.prepareRebalance(now, "member rejoined")
			return
		}
		m.replyJoin(to, m.joinResponse(mem, false))
	default: // Empty has no members
		m.replyJoin(to, joinError(j.memberID, ec(kproto.CodeUnknownMemberID)))
	}
}

// validateMember is Kafka's validateCurrentMember: with an instance id,
// it must be known and held by memberID; without, memberID must be a
// member.
func (m *groupMachine) validateMember(memberID, instanceID string) int16 {
	if instanceID != "" {
		cur, ok := m.static[instanceID]
		switch {
		case !ok:
			return ec(kproto.CodeUnknownMemberID)
		case cur != memberID:
			return ec(kproto.CodeFencedInstanceID)
		}
		return 0
	}
	if m.members[memberID] == nil {
		return ec(kproto.CodeUnknownMemberID)
	}
	return 0
}

// addMember is Kafka's addMemberThenRebalanceOrCompleteJoin.
func (m *groupMachine) addMember(now time.Time, j joinInput, id string, to replyTo) {
	delete(m.pending, id)
	m.cancel(timerKey{timerPending, id})
	if len(m.members) == 0 {
		m.protocolType = j.protocolType
	}
	mem := &groupMember{id: id, instanceID: j.instanceID, isNew: true, join: to}
	m.setJoin(mem, j)
	m.nextOrder++
	mem.order = m.nextOrder
	if m.state == groupPreparingRebalance && m.generation == 0 {
		m.delayJoined = true
	}
	m.members[id] = mem
	if mem.instanceID != "" {
		m.static[mem.instanceID] = id
	}
	// A new member cannot heartbeat; its join is bounded instead.
	m.arm(timerKey{timerSession, id}, newMemberJoinTimeout)
	m.out.members = true
	m.maybePrepareRebalance(now, "new member joined")
}

func (m *groupMachine) setJoin(mem *groupMember, j joinInput) {
	mem.protocols, mem.protocolType = j.protocols, j.protocolType
	mem.sessionTimeout, mem.rebalanceTimeout = j.session, j.rebalance
	mem.clientID, mem.host, mem.joinVersion = j.clientID, j.host, j.version
}

// updateMember takes j's parameters for mem and parks the join. A join
// parked before for the same member is superseded (Kafka drops it
// unanswered; here it is told UNKNOWN_MEMBER_ID).
func (m *groupMachine) updateMember(mem *groupMember, j joinInput, to replyTo) {
	m.setJoin(mem, j)
	m.answerJoin(mem, joinError(mem.id, ec(kproto.CodeUnknownMemberID)))
	mem.join = to
}

// replaceStatic is Kafka's updateStaticMemberThenRebalanceOrCompleteJoin:
// a static member rejoined without its member id (it restarted). The old
// id is fenced; the instance keeps its place and assignment, and in a
// Stable group whose protocol would not change it gets the current
// generation without a rebalance (KIP-345).
func (m *groupMachine) replaceStatic(now time.Time, j joinInput, id string, to replyTo) {
	oldLeader := m.leader
	oldID := m.static[j.instanceID]
	mem := m.members[oldID]
	m.answerJoin(mem, joinError(oldID, ec(kproto.CodeFencedInstanceID)))
	m.answerSync(mem, syncError(ec(kproto.CodeFencedInstanceID)))
	m.cancel(timerKey{timerSession, oldID})
	delete(m.members, oldID)
	delete(m.pendingSync, oldID)
	mem.id = id
	m.members[id] = mem
	m.static[j.instanceID] = id
	if m.leader == oldID {
		m.leader = id
	}
	m.arm(timerKey{timerSession, id}, mem.sessionTimeout)
	m.setJoin(mem, j)
	mem.join = to
	m.out.members = true
	switch m.state {
	case groupStable:
		if m.selectProtocol() != m.protocol {
			m.prepareRebalance(now, "static member rejoined with protocols that change the group's")
			return
		}
		// The new member id is stored before it is answered (the reply
		// waits for the store, group_shell.go).
		m.metaChanged()
		var r *kmsg.JoinGroupResponse
		if j.version >= 9 {
			// KIP-814: a static leader learns it leads, but must not
			// reassign a Stable group.
			lead := id == m.leader
			r = m.joinResponse(mem, lead)
			r.SkipAssignment = lead
		} else {
			// The old leader id, so a restarted leader does not assign:
			// a Stable group would not hand its assignment out.
			r = m.joinResponse(mem, false)
			r.LeaderID = oldLeader
		}
		m.answerJoin(mem, r)
	case groupCompletingRebalance:
		// The leader may have been given the old member id to assign.
		m.prepareRebalance(now, "static member rejoined during the sync phase")
	}
}

func (m *groupMachine) maybePrepareRebalance(now time.Time, reason string) {
	switch m.state {
	case groupStable, groupCompletingRebalance, groupEmpty:
		m.prepareRebalance(now, reason)
	}
}

// prepareRebalance is Kafka's: members waiting for their assignment must
// rejoin; an Empty group waits group.initial.rebalance.delay.ms first.
func (m *groupMachine) prepareRebalance(now time.Time, reason string) {
	if m.state == groupCompletingRebalance {
		for _, mem := range m.sortedMembers() {
			mem.assignment = nil
			if mem.sync != 0 {
				m.answerSync(mem, syncError(ec(kproto.CodeRebalanceInProgress)))
				m.arm(timerKey{timerSession, mem.id}, mem.sessionTimeout)
			}
		}
	}
	clear(m.pendingSync)
	m.cancel(timerKey{timerSync, ""})
	wasEmpty := m.state == groupEmpty
	m.state = groupPreparingRebalance
	if m.log != nil {
		m.log.Debug("group preparing rebalance", "generation", m.generation, "reason", reason)
	}
	timeout := m.rebalanceTimeout()
	if wasEmpty && m.cfg.initialRebalanceDelay > 0 {
		m.initialDelay, m.delayJoined = true, false
		m.delayRemaining = max(timeout-m.cfg.initialRebalanceDelay, 0)
		m.arm(timerKey{timerJoin, ""}, m.cfg.initialRebalanceDelay)
		return
	}
	if timeout == 0 { // nobody left to wait for
		m.completeJoin(now)
		return
	}
	m.arm(timerKey{timerJoin, ""}, timeout)
	m.tryCompleteJoin(now)
}

// rebalanceTimeout is the longest of the members'.
func (m *groupMachine) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, mem := range m.members {
		d = max(d, mem.rebalanceTimeout)
	}
	return d
}

// joinTimeout: the rebalance timeout or an initial delay ran out. While
// members keep arriving at a new group, the delay is taken again, up to
// the rebalance timeout (Kafka's InitialDelayedJoin).
func (m *groupMachine) joinTimeout(now time.Time) {
	if m.state != groupPreparingRebalance {
		return
	}
	if m.initialDelay {
		if m.delayJoined && m.delayRemaining > 0 {
			d := min(m.cfg.initialRebalanceDelay, m.delayRemaining)
			m.delayJoined, m.delayRemaining = false, m.delayRemaining-d
			m.arm(timerKey{timerJoin, ""}, d)
			return
		}
		m.initialDelay = false
	}
	m.completeJoin(now)
}

// tryCompleteJoin completes the join phase once every member has
// rejoined and no handed-out member id is still expected.
func (m *groupMachine) tryCompleteJoin(now time.Time) {
	if m.state != groupPreparingRebalance || m.initialDelay || len(m.pending) > 0 {
		return
	}
	for _, mem := range m.members {
		if mem.join == 0 {
			return
		}
	}
	m.completeJoin(now)
}

// completeJoin is Kafka's onCompleteJoin: dynamic members that did not
// rejoin are removed (static ones keep their place until their session
// ends), a new generation begins and every parked join is answered.
func (m *groupMachine) completeJoin(now time.Time) {
	m.cancel(timerKey{timerJoin, ""})
	m.initialDelay = false
	for _, mem := range m.sortedMembers() {
		if mem.join == 0 && mem.instanceID == "" {
			m.removeMember(mem.id)
		}
	}
	if m.members[m.leader] == nil || m.members[m.leader].join == 0 {
		// Kafka's maybeElectNewJoinedLeader; here the first to join.
		m.leader = ""
		for _, mem := range m.sortedMembers() {
			if mem.join != 0 {
				m.leader = mem.id
				break
			}
		}
		if m.leader == "" && len(m.members) > 0 {
			// Only static members that did not rejoin: wait again.
			m.arm(timerKey{timerJoin, ""}, m.rebalanceTimeout())
			return
		}
	}
	m.generation++
	m.metaChanged()
	clear(m.pendingSync)
	m.out.members = true
	if len(m.members) == 0 {
		m.becomeEmpty(now)
		return
	}
	m.protocol = m.selectProtocol()
	m.state = groupCompletingRebalance
	for _, mem := range m.sortedMembers() {
		mem.assignment = nil
		m.answerJoin(mem, m.joinResponse(mem, mem.id == m.leader))
		m.arm(timerKey{timerSession, mem.id}, mem.sessionTimeout)
		mem.isNew = false
		m.pendingSync[mem.id] = true
	}
	m.arm(timerKey{timerSync, ""}, m.rebalanceTimeout())
	if m.log != nil {
		m.log.Debug("group rebalanced", "generation", m.generation, "members", len(m.members),
			"protocol", m.protocol, "leader", m.leader)
	}
}

func (m *groupMachine) becomeEmpty(now time.Time) {
	m.state = groupEmpty
	m.protocol, m.leader = "", ""
	m.emptySince = now
	m.out.owners, m.out.members = true, true
}

// joinResponse is mem's answer for the current generation; withMembers
// (the leader) gets every member's metadata for the chosen protocol.
func (m *groupMachine) joinResponse(mem *groupMember, withMembers bool) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.Generation = m.generation
	r.ProtocolType = kmsg.StringPtr(m.protocolType)
	r.Protocol = kmsg.StringPtr(m.protocol)
	r.LeaderID = m.leader
	r.MemberID = mem.id
	if withMembers {
		for _, o := range m.sortedMembers() {
			rm := kmsg.NewJoinGroupResponseMember()
			rm.MemberID = o.id
			if o.instanceID != "" {
				rm.InstanceID = kmsg.StringPtr(o.instanceID)
			}
			rm.ProtocolMetadata = o.metadataFor(m.protocol)
			r.Members = append(r.Members, rm)
		}
	}
	return r
}

// selectProtocol: among the protocols every member supports, each
// member votes for the first in its own order; most votes wins, ties go
// to the leader's (or the first member's) preference order.
func (m *groupMachine) selectProtocol() string {
	ref := m.members[m.leader]
	if ref == nil {
		if s := m.sortedMembers(); len(s) > 0 {
			ref = s[0]
		} else {
			return ""
		}
	}
	var candidates []string
	for _, p := range ref.protocols {
		all := true
		for _, mem := range m.members {
			if !hasProtocol(mem, p.Name) {
				all = false
				break
			}
		}
		if all {
			candidates = append(candidates, p.Name)
		}
	}
	votes := map[string]int{}
	for _, mem := range m.members {
		for _, p := range mem.protocols {
			if containsString(candidates, p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for _, c := range candidates {
		if best == "" || votes[c] > votes[best] {
			best = c
		}
	}
	return best
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
