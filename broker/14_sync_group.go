package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// SyncGroup (key 14), v0-5, via kmsg.
//
// The leader's request carries every member's assignment; the others
// park until it arrives (or a rebalance starts: REBALANCE_IN_PROGRESS).
// v3 adds group.instance.id, v5 the protocol type and name, which must
// match the group's (INCONSISTENT_GROUP_PROTOCOL). After the leader's
// sync the consumer-protocol assignment is mirrored to
// /consumers/{group}/owners.

func init() { regKey(kproto.KeySyncGroup, 0, 5, groupHandler(handleSyncGroup)) }

func handleSyncGroup(r groupRequest, req *kmsg.SyncGroupRequest) kmsg.Response {
	b := r.c.b
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	if !r.c.allowedGroup(authz.OpRead, req.Group) {
		resp.ErrorCode = ec(kproto.CodeGroupAuthorizationFailed)
		return resp
	}
	if req.Group == "" {
		resp.ErrorCode = ec(kproto.CodeInvalidGroupID)
		return resp
	}
	g, code := b.groups.lookup(req.Group, false)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	if g == nil {
		resp.ErrorCode = ec(kproto.CodeUnknownMemberID)
		return resp
	}
	return g.syncGroup(req)
}
