package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// Heartbeat (key 12), v0-4, via kmsg.
//
// Resets the member's session timer. Errors in Kafka's order: unknown
// group or member UNKNOWN_MEMBER_ID, another member holding the instance
// id FENCED_INSTANCE_ID (v3+), wrong generation ILLEGAL_GENERATION; then
// by state: Empty UNKNOWN_MEMBER_ID, PreparingRebalance
// REBALANCE_IN_PROGRESS (the member must rejoin), CompletingRebalance
// and Stable none. While the group's partition is being loaded
// (group_load.go) the answer is NONE, as Kafka's.

func init() { regKey(kproto.KeyHeartbeat, 0, 4, groupHandler(handleHeartbeat)) }

func handleHeartbeat(r groupRequest, req *kmsg.HeartbeatRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if !r.c.allowedGroup(authz.OpRead, req.Group) {
		resp.ErrorCode = ec(kproto.CodeGroupAuthorizationFailed)
		return resp
	}
	if req.Group == "" {
		resp.ErrorCode = ec(kproto.CodeInvalidGroupID)
		return resp
	}
	g, code := r.c.b.groups.lookup(req.Group, false)
	if code == ec(kproto.CodeCoordinatorLoadInProgress) {
		return resp // as Kafka: the group is still loading, so NONE, blindly
	}
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	if g == nil {
		resp.ErrorCode = ec(kproto.CodeUnknownMemberID)
		return resp
	}
	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	g.mu.Lock()
	out := g.stepLocked(func(time.Time) {
		resp.ErrorCode = g.heartbeat(req.MemberID, instanceID, req.Generation)
	})
	g.mu.Unlock()
	g.finish(out)
	return resp
}
