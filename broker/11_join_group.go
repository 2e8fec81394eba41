package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// JoinGroup (key 11), v0-9, via kmsg.
//
// v1 adds the rebalance timeout (v0 uses the session timeout), v4
// answers a first join without a member id with MEMBER_ID_REQUIRED and
// the id to come back with (KIP-394), v5 adds group.instance.id (static
// membership, KIP-345), v9 sets SkipAssignment when a static leader
// rejoins a Stable group. The request parks until the join phase ends
// (every member rejoined, or the rebalance timeout) on the connection's
// reader, as Kafka delays the response. A new generation is stored in
// ZooKeeper (group_records.go) before it is answered.

func init() { regKey(kproto.KeyJoinGroup, 0, 9, groupHandler(handleJoinGroup)) }

func handleJoinGroup(r groupRequest, req *kmsg.JoinGroupRequest) kmsg.Response {
	b := r.c.b
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.Generation, resp.MemberID = -1, req.MemberID
	cfg := &b.groups.cfg
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	switch {
	case !r.c.allowedGroup(authz.OpRead, req.Group):
		resp.ErrorCode = ec(kproto.CodeGroupAuthorizationFailed)
		return resp
	case req.Group == "":
		resp.ErrorCode = ec(kproto.CodeInvalidGroupID)
		return resp
	case session < cfg.MinSessionTimeout || session > cfg.MaxSessionTimeout:
		resp.ErrorCode = ec(kproto.CodeInvalidSessionTimeout)
		return resp
	}
	g, code := b.groups.lookup(req.Group, req.MemberID == "")
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	if g == nil {
		resp.ErrorCode = ec(kproto.CodeUnknownMemberID)
		return resp
	}
	out := g.joinGroup(req, r.clientID, r.host) // stored before it is answered (group_shell.go)
	if out.Version = req.Version; req.Version < 9 {
		out.SkipAssignment = false
	}
	return out
}
