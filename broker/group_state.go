package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// The classic group state machine, as Kafka's GroupCoordinator runs it:
//
//	Empty ──join──► PreparingRebalance ──all joined / rebalance timeout──► CompletingRebalance
//	  ▲                 ▲        ▲                                              │ leader's SyncGroup
//	  │ last member     │        └──── join, leave, session expiry ───────────┤
//	  │ leaves          └───────────── join (new or changed), leave, expiry ── Stable
//	Dead: deleted (DeleteGroups, expiry) or no longer coordinated here.
//
// Every method here needs g.mu held.

// joinLocked handles a JoinGroup that passed validation. It returns the
// response now, or a channel the response will arrive on.
func (g *group) joinLocked(req *kmsg.JoinGroupRequest, clientID, host string) (*kmsg.JoinGroupResponse, chan *kmsg.JoinGroupResponse) {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Generation = -1
	fail := func(code int16) (*kmsg.JoinGroupResponse, chan *kmsg.JoinGroupResponse) {
		resp.ErrorCode = code
		resp.MemberID = req.MemberID
		return resp, nil
	}
	if g.state == groupDead {
		return fail(ec(kproto.CodeCoordinatorNotAvailable))
	}
	if req.ProtocolType == "" || len(req.Protocols) == 0 {
		return fail(ec(kproto.CodeInconsistentGroupProtocol))
	}
	if !g.supportsLocked(req.ProtocolType, req.Protocols) {
		return fail(ec(kproto.CodeInconsistentGroupProtocol))
	}
	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	sessionTimeout := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	rebalanceTimeout := sessionTimeout
	if req.Version >= 1 {
		rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	m := &groupMember{instanceID: instanceID, clientID: clientID, host: host,
		sessionTimeout: sessionTimeout, rebalanceTimeout: rebalanceTimeout,
		protocolType: req.ProtocolType, protocols: req.Protocols, joinVersion: req.Version}

	if req.MemberID == "" {
		if instanceID != "" {
			if oldID, ok := g.static[instanceID]; ok {
				return g.replaceStaticLocked(oldID, m)
			}
		}
		if g.co.cfg.MaxSize > 0 && int32(len(g.members)+len(g.pending)) >= g.co.cfg.MaxSize {
			return fail(codeGroupMaxSizeReached)
		}
		prefix := clientID
		if instanceID != "" {
			prefix = instanceID
		}
		m.id = newMemberID(prefix)
		if instanceID == "" && req.Version >= 4 {
			// KIP-394: the member must come back with this id.
			g.addPendingLocked(m.id, sessionTimeout)
			resp.ErrorCode = ec(kproto.CodeMemberIDRequired)
			resp.MemberID = m.id
			return resp, nil
		}
		return nil, g.addMemberLocked(m)
	}

	if t, ok := g.pending[req.MemberID]; ok {
		t.Stop()
		delete(g.pending, req.MemberID)
		m.id = req.MemberID
		return nil, g.addMemberLocked(m)
	}
	old := g.members[req.MemberID]
	if instanceID != "" {
		if cur, ok := g.static[instanceID]; ok && cur != req.MemberID {
			return fail(ec(kproto.CodeFencedInstanceID))
		}
	}
	if old == nil {
		return fail(ec(kproto.CodeUnknownMemberID))
	}
	if old.instanceID != instanceID {
		return fail(ec(kproto.CodeFencedInstanceID))
	}
	m.id = old.id
	switch g.state {
	case groupPreparingRebalance:
		return nil, g.updateMemberLocked(old, m)
	case groupCompletingRebalance:
		if sameProtocols(old.protocols, m.protocols) {
			// A retried join: the same answer again.
			return g.joinResponseLocked(old), nil
		}
		ch := g.updateMemberLocked(old, m)
		g.prepareRebalanceLocked("member changed its protocols")
		return nil, ch
	case groupStable:
		if old.id == g.leader || !sameProtocols(old.protocols, m.protocols) {
			ch := g.updateMemberLocked(old, m)
			g.prepareRebalanceLocked("member rejoined")
			return nil, ch
		}
		return g.joinResponseLocked(old), nil
	default: // Empty cannot have members
		return fail(ec(kproto.CodeUnknownMemberID))
	}
}

// supportsLocked: the join's protocol type matches and it shares a
// protocol with every member.
func (g *group) supportsLocked(ptype string, protos []kmsg.JoinGroupRequestProtocol) bool {
	if len(g.members) == 0 {
		return true
	}
	if ptype != g.protocolType {
		return false
	}
	for _, p := range protos {
		all := true
		for _, m := range g.members {
			if !hasProtocol(m, p.Name) {
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

func hasProtocol(m *groupMember, name string) bool {
	for _, p := range m.protocols {
		if p.Name == name {
			return true
		}
	}
	return false
}

func (g *group) addPendingLocked(id string, timeout time.Duration) {
	g.pending[id] = time.AfterFunc(timeout, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if _, ok := g.pending[id]; ok {
			delete(g.pending, id)
			if g.state == groupPreparingRebalance {
				g.tryCompleteJoinLocked()
			}
		}
	})
}

// addMemberLocked adds a new member and starts (or joins) a rebalance.
func (g *group) addMemberLocked(m *groupMember) chan *kmsg.JoinGroupResponse {
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	m.join = ch
	m.joinedInRebalance = true
	g.nextOrder++
	m.order = g.nextOrder
	g.members[m.id] = m
	if m.instanceID != "" {
		g.static[m.instanceID] = m.id
	}
	if g.initialDelay {
		g.delayJoined = true
	}
	switch g.state {
	case groupPreparingRebalance:
		g.tryCompleteJoinLocked()
	default:
		g.prepareRebalanceLocked("new member joined")
	}
	g.co.mirror.members(g)
	return ch // completing the join may already have answered and cleared m.join
}

// updateMemberLocked replaces old's join parameters with m's and parks
// the join.
func (g *group) updateMemberLocked(old, m *groupMember) chan *kmsg.JoinGroupResponse {
	old.protocols, old.protocolType = m.protocols, m.protocolType
	old.sessionTimeout, old.rebalanceTimeout = m.sessionTimeout, m.rebalanceTimeout
	old.clientID, old.host, old.joinVersion = m.clientID, m.host, m.joinVersion
	if old.join != nil {
		// A second join while one is parked: the first is superseded.
		r := kmsg.NewPtrJoinGroupResponse()
		r.ErrorCode, r.MemberID, r.Generation = ec(kproto.CodeUnknownMemberID), old.id, -1
		old.join <- r
	}
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	old.join = ch
	if g.state == groupPreparingRebalance {
		g.tryCompleteJoinLocked()
	}
	return ch
}

// replaceStaticLocked: a static member rejoined with an unknown member id
// (it restarted). The old member id is fenced; the instance keeps its
// place, and in a Stable group with unchanged protocols it gets the
// current generation without a rebalance (KIP-345).
func (g *group) replaceStaticLocked(oldID string, m *groupMember) (*kmsg.JoinGroupResponse, chan *kmsg.JoinGroupResponse) {
	old := g.members[oldID]
	m.id = newMemberID(m.instanceID)
	if old.join != nil {
		r := kmsg.NewPtrJoinGroupResponse()
		r.ErrorCode, r.MemberID, r.Generation = ec(kproto.CodeFencedInstanceID), old.id, -1
		old.join <- r
		old.join = nil
	}
	if old.sync != nil {
		r := kmsg.NewPtrSyncGroupResponse()
		r.ErrorCode = ec(kproto.CodeFencedInstanceID)
		old.sync <- r
		old.sync = nil
	}
	old.heartbeatSeq++
	if old.heartbeat != nil {
		old.heartbeat.Stop()
	}
	delete(g.members, oldID)
	m.assignment, m.order = old.assignment, old.order
	g.members[m.id] = m
	g.static[m.instanceID] = m.id
	if g.leader == oldID {
		g.leader = m.id
	}
	g.co.mirror.members(g)
	// As Kafka: no rebalance unless the restarted member would change the
	// selected protocol (its metadata, e.g. owned partitions, may differ).
	unchanged := g.selectProtocolLocked() == g.protocol
	switch {
	case g.state == groupStable && unchanged:
		g.scheduleHeartbeatLocked(m)
		resp := g.joinResponseLocked(m)
		if m.id == g.leader && m.joinVersion >= 9 {
			resp.SkipAssignment = true
		}
		return resp, nil
	case g.state == groupCompletingRebalance && unchanged:
		g.scheduleHeartbeatLocked(m)
		return g.joinResponseLocked(m), nil
	default:
		ch := make(chan *kmsg.JoinGroupResponse, 1)
		m.join = ch
		if g.state == groupPreparingRebalance {
			g.tryCompleteJoinLocked()
		} else {
			g.prepareRebalanceLocked("static member rejoined with new protocols")
		}
		return nil, ch
	}
}

// prepareRebalanceLocked moves the group to PreparingRebalance.
func (g *group) prepareRebalanceLocked(reason string) {
	if g.state == groupCompletingRebalance {
		// Members waiting for their assignment must rejoin.
		for _, m := range g.members {
			if m.sync != nil {
				r := kmsg.NewPtrSyncGroupResponse()
				r.ErrorCode = ec(kproto.CodeRebalanceInProgress)
				m.sync <- r
				m.sync = nil
			}
		}
	}
	wasEmpty := g.state == groupEmpty
	g.state = groupPreparingRebalance
	g.co.b.log.Debug("group preparing rebalance", "group", g.name, "generation", g.generation, "reason", reason)
	timeout := g.maxRebalanceTimeoutLocked()
	if wasEmpty && g.co.cfg.InitialRebalanceDelay > 0 {
		g.initialDelay, g.delayJoined, g.delayStart = true, false, time.Now()
		g.armRebalanceTimerLocked(min(g.co.cfg.InitialRebalanceDelay, timeout))
		return
	}
	g.armRebalanceTimerLocked(timeout)
	g.tryCompleteJoinLocked()
}

func (g *group) maxRebalanceTimeoutLocked() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

func (g *group) armRebalanceTimerLocked(d time.Duration) {
	g.rebalanceSeq++
	seq := g.rebalanceSeq
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
	}
	g.rebalanceTimer = time.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.rebalanceSeq != seq || g.state != groupPreparingRebalance {
			return
		}
		if g.initialDelay {
			// Kafka's InitialDelayedJoin: while members keep arriving,
			// wait another delay, up to the rebalance timeout.
			remaining := g.maxRebalanceTimeoutLocked() - time.Since(g.delayStart)
			if g.delayJoined && remaining > 0 {
				g.delayJoined = false
				g.armRebalanceTimerLocked(min(g.co.cfg.InitialRebalanceDelay, remaining))
				return
			}
			g.initialDelay = false
		}
		g.completeJoinLocked()
	})
}

// tryCompleteJoinLocked completes the join phase once every member has
// rejoined and no handed-out member id is still expected.
func (g *group) tryCompleteJoinLocked() {
	if g.state != groupPreparingRebalance || g.initialDelay {
		return
	}
	if len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.join == nil {
			return
		}
	}
	g.completeJoinLocked()
}

// completeJoinLocked ends the join phase: members that did not rejoin are
// removed, a new generation begins and every parked join is answered.
func (g *group) completeJoinLocked() {
	g.rebalanceSeq++
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
		g.rebalanceTimer = nil
	}
	for id, m := range g.members {
		if m.join == nil {
			g.removeMemberLocked(id)
		}
	}
	g.generation++
	g.metaChangedLocked()
	if len(g.members) == 0 {
		g.becomeEmptyLocked()
		g.co.mirror.members(g)
		return
	}
	g.protocol = g.selectProtocolLocked()
	if g.members[g.leader] == nil {
		// Kafka's choice: the member that joined first.
		var first *groupMember
		for _, m := range g.members {
			if first == nil || m.order < first.order {
				first = m
			}
		}
		g.leader = first.id
	}
	g.state = groupCompletingRebalance
	for _, m := range g.members {
		m.joinedInRebalance = false
		m.assignment = nil
		resp := g.joinResponseLocked(m)
		m.join <- resp
		m.join = nil
		g.scheduleHeartbeatLocked(m)
	}
	g.co.b.log.Debug("group rebalanced", "group", g.name, "generation", g.generation,
		"members", len(g.members), "protocol", g.protocol, "leader", g.leader)
	g.co.mirror.members(g)
}

func (g *group) becomeEmptyLocked() {
	g.metaChangedLocked()
	g.persistMetadataAsync()
	g.state = groupEmpty
	g.protocol = ""
	g.leader = ""
	g.emptySince = time.Now()
	g.co.mirror.owners(g, nil)
}

// joinResponseLocked is m's answer for the current generation: the leader
// gets every member's metadata for the chosen protocol.
func (g *group) joinResponseLocked(m *groupMember) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.Generation = g.generation
	r.ProtocolType = kmsg.StringPtr(g.protocolType)
	r.Protocol = kmsg.StringPtr(g.protocol)
	r.LeaderID = g.leader
	r.MemberID = m.id
	if m.id == g.leader {
		for _, o := range g.members {
			rm := kmsg.NewJoinGroupResponseMember()
			rm.MemberID = o.id
			if o.instanceID != "" {
				rm.InstanceID = kmsg.StringPtr(o.instanceID)
			}
			rm.ProtocolMetadata = o.metadataFor(g.protocol)
			r.Members = append(r.Members, rm)
		}
	}
	return r
}

// selectProtocolLocked: among the protocols every member supports, each
// member votes for the first in its own order; most votes wins, ties go
// to the leader's (or any member's) preference order.
func (g *group) selectProtocolLocked() string {
	var candidates []string
	var ref *groupMember
	if ref = g.members[g.leader]; ref == nil {
		for _, m := range g.members {
			ref = m
			break
		}
	}
	for _, p := range ref.protocols {
		all := true
		for _, m := range g.members {
			if !hasProtocol(m, p.Name) {
				all = false
				break
			}
		}
		if all {
			candidates = append(candidates, p.Name)
		}
	}
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
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

// removeMemberLocked deletes a member (not rebalancing).
func (g *group) removeMemberLocked(id string) {
	m := g.members[id]
	if m == nil {
		return
	}
	m.heartbeatSeq++
	if m.heartbeat != nil {
		m.heartbeat.Stop()
	}
	if m.join != nil {
		r := kmsg.NewPtrJoinGroupResponse()
		r.ErrorCode, r.MemberID, r.Generation = ec(kproto.CodeUnknownMemberID), id, -1
		m.join <- r
		m.join = nil
	}
	if m.sync != nil {
		r := kmsg.NewPtrSyncGroupResponse()
		r.ErrorCode = ec(kproto.CodeUnknownMemberID)
		m.sync <- r
		m.sync = nil
	}
	delete(g.members, id)
	if m.instanceID != "" && g.static[m.instanceID] == id {
		delete(g.static, m.instanceID)
	}
	if g.leader == id {
		g.leader = ""
	}
}

// memberGoneLocked removes a member that left or expired and rebalances.
func (g *group) memberGoneLocked(id, reason string) {
	g.removeMemberLocked(id)
	g.co.mirror.members(g)
	switch g.state {
	case groupStable, groupCompletingRebalance:
		if len(g.members) == 0 {
			g.generation++
			g.becomeEmptyLocked()
			return
		}
		g.prepareRebalanceLocked(reason)
	case groupPreparingRebalance:
		if len(g.members) == 0 && len(g.pending) == 0 {
			g.rebalanceSeq++
			if g.rebalanceTimer != nil {
				g.rebalanceTimer.Stop()
			}
			g.initialDelay = false
			g.generation++
			g.becomeEmptyLocked()
			return
		}
		g.tryCompleteJoinLocked()
	}
}

// scheduleHeartbeatLocked (re)starts m's session timer.
func (g *group) scheduleHeartbeatLocked(m *groupMember) {
	m.heartbeatSeq++
	seq := m.heartbeatSeq
	if m.heartbeat != nil {
		m.heartbeat.Stop()
	}
	m.heartbeat = time.AfterFunc(m.sessionTimeout, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if m.heartbeatSeq != seq || g.members[m.id] != m {
			return
		}
		if m.join != nil || m.sync != nil {
			// Kafka keeps members alive while they wait on the coordinator.
			g.scheduleHeartbeatLocked(m)
			return
		}
		g.co.b.log.Info("group member session expired", "group", g.name, "member", m.id)
		g.memberGoneLocked(m.id, "member session expired")
	})
}

// syncLocked handles a validated SyncGroup from member m.
func (g *group) syncLocked(m *groupMember, req *kmsg.SyncGroupRequest) (*kmsg.SyncGroupResponse, chan *kmsg.SyncGroupResponse) {
	resp := kmsg.NewPtrSyncGroupResponse()
	switch g.state {
	case groupPreparingRebalance:
		resp.ErrorCode = ec(kproto.CodeRebalanceInProgress)
		return resp, nil
	case groupStable:
		g.scheduleHeartbeatLocked(m)
		resp.ProtocolType, resp.Protocol = kmsg.StringPtr(g.protocolType), kmsg.StringPtr(g.protocol)
		resp.MemberAssignment = m.assignment
		return resp, nil
	case groupCompletingRebalance:
	default:
		resp.ErrorCode = ec(kproto.CodeUnknownMemberID)
		return resp, nil
	}
	if m.sync != nil {
		r := kmsg.NewPtrSyncGroupResponse()
		r.ErrorCode = ec(kproto.CodeRebalanceInProgress)
		m.sync <- r
	}
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	m.sync = ch
	g.scheduleHeartbeatLocked(m)
	if m.id == g.leader {
		for _, a := range req.GroupAssignment {
			if o := g.members[a.MemberID]; o != nil {
				o.assignment = a.MemberAssignment
			}
		}
		g.state = groupStable
		for _, o := range g.members {
			if o.sync != nil {
				r := kmsg.NewPtrSyncGroupResponse()
				r.ProtocolType, r.Protocol = kmsg.StringPtr(g.protocolType), kmsg.StringPtr(g.protocol)
				r.MemberAssignment = o.assignment
				o.sync <- r
				o.sync = nil
			}
		}
		g.co.mirror.owners(g, g.ownersLocked())
		g.metaChangedLocked()
		g.persistMetadataAsync()
	}
	return nil, ch // the leader's own sync was answered above
}

// ownersLocked decodes the consumer protocol assignments: partition →
// member id. Nil for other protocol types.
func (g *group) ownersLocked() map[topicPartition]string {
	if g.protocolType != "consumer" {
		return nil
	}
	out := map[topicPartition]string{}
	for _, m := range g.members {
		var a kmsg.ConsumerMemberAssignment
		if len(m.assignment) == 0 || a.ReadFrom(m.assignment) != nil {
			continue
		}
		for _, t := range a.Topics {
			for _, p := range t.Partitions {
				out[topicPartition{t.Topic, p}] = m.id
			}
		}
	}
	return out
}

// checkMemberLocked validates member/instance/generation for Heartbeat,
// SyncGroup and OffsetCommit, in Kafka's order.
func (g *group) checkMemberLocked(memberID string, instanceID *string, generation int32) (*groupMember, int16) {
	if g.state == groupDead {
		return nil, ec(kproto.CodeCoordinatorNotAvailable)
	}
	if instanceID != nil && *instanceID != "" {
		if cur, ok := g.static[*instanceID]; ok && cur != memberID {
			return nil, ec(kproto.CodeFencedInstanceID)
		}
	}
	m := g.members[memberID]
	if m == nil {
		return nil, ec(kproto.CodeUnknownMemberID)
	}
	if generation != g.generation {
		return m, ec(kproto.CodeIllegalGeneration)
	}
	return m, 0
}
