package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// LeaveGroup (key 13), v0-5, via kmsg.
//
// v0-2 name one member; v3+ batch members, each by member id and/or
// group.instance.id (KIP-345: a static member leaves by instance id with
// an empty member id), each with its own error; v5 adds a reason, which
// is logged. Members leaving start a rebalance; the last one leaves the
// group Empty.

func init() { regKey(kproto.KeyLeaveGroup, 0, 5, groupHandler(handleLeaveGroup)) }

func handleLeaveGroup(r groupRequest, req *kmsg.LeaveGroupRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leaving := req.Members
	if req.Version < 3 {
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = req.MemberID
		leaving = []kmsg.LeaveGroupRequestMember{m}
	}
	codes := make([]int16, len(leaving))
	setAll := func(code int16) {
		for i := range codes {
			codes[i] = code
		}
	}
	top := int16(0)
	g, code := r.c.b.groups.lookup(req.Group, false)
	switch {
	case !r.c.allowedGroup(authz.OpRead, req.Group):
		top = ec(kproto.CodeGroupAuthorizationFailed)
	case req.Group == "":
		top = ec(kproto.CodeInvalidGroupID)
	case code != 0:
		top = code
	case g == nil:
		setAll(ec(kproto.CodeUnknownMemberID))
	default:
		g.mu.Lock()
		out := g.stepLocked(func(now time.Time) {
			if g.state == groupDead {
				top = ec(kproto.CodeCoordinatorNotAvailable)
				return
			}
			for i, lm := range leaving {
				codes[i] = g.leaveOne(now, lm)
			}
		})
		g.mu.Unlock()
		g.finish(out)
	}
	if req.Version < 3 {
		if top == 0 {
			top = codes[0]
		}
		resp.ErrorCode = top
		return resp
	}
	resp.ErrorCode = top
	if top != 0 {
		return resp
	}
	for i, lm := range leaving {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = lm.MemberID, lm.InstanceID, codes[i]
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

// leaveOne is one member of a LeaveGroup; g.mu must be held.
func (g *group) leaveOne(now time.Time, lm kmsg.LeaveGroupRequestMember) int16 {
	instanceID, reason := "", "member left the group"
	if lm.InstanceID != nil {
		instanceID = *lm.InstanceID
	}
	if lm.Reason != nil && *lm.Reason != "" {
		reason += ": " + *lm.Reason
	}
	g.co.b.log.Debug("group member leaving", "group", g.name, "member", lm.MemberID, "instance", instanceID, "reason", reason)
	return g.leave(now, lm.MemberID, instanceID, reason)
}
