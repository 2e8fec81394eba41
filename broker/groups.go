package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// Group APIs before the group coordinator exists (a later issue):
// OffsetCommit (8), OffsetFetch (9), JoinGroup (11), Heartbeat (12),
// LeaveGroup (13), SyncGroup (14), DescribeGroups (15), ListGroups (16),
// DeleteGroups (42) and OffsetDelete (47) are not advertised in
// ApiVersions, so well-behaved clients never send them. A client that
// sends them anyway gets a well-formed response at its version with
// UNSUPPORTED_VERSION in every error field (non-retriable, so clients
// fail fast rather than retry a coordinator that will not come), instead
// of a closed connection. FindCoordinator (10) already answers this broker.

func init() {
	for _, key := range []int16{kproto.KeyOffsetCommit, kproto.KeyOffsetFetch, kproto.KeyJoinGroup,
		kproto.KeyHeartbeat, kproto.KeyLeaveGroup, kproto.KeySyncGroup, kproto.KeyDescribeGroups,
		kproto.KeyListGroups, kproto.KeyDeleteGroups, kproto.KeyOffsetDelete} {
		regHidden(key, 0, kmsg.RequestForKey(key).MaxVersion(), kmsgHandler(handleGroupUnsupported))
	}
}

func handleGroupUnsupported(c *conn, req kmsg.Request) (kmsg.Response, error) {
	const code = int16(kproto.CodeUnsupportedVersion)
	resp := req.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.OffsetCommitResponse:
		for _, t := range req.(*kmsg.OffsetCommitRequest).Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
	case *kmsg.OffsetFetchResponse:
		r.ErrorCode = code
		for _, g := range req.(*kmsg.OffsetFetchRequest).Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, code
			r.Groups = append(r.Groups, rg)
		}
	case *kmsg.JoinGroupResponse:
		r.ErrorCode = code
	case *kmsg.HeartbeatResponse:
		r.ErrorCode = code
	case *kmsg.LeaveGroupResponse:
		r.ErrorCode = code
	case *kmsg.SyncGroupResponse:
		r.ErrorCode = code
	case *kmsg.DescribeGroupsResponse:
		for _, g := range req.(*kmsg.DescribeGroupsRequest).Groups {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, code
			r.Groups = append(r.Groups, rg)
		}
	case *kmsg.ListGroupsResponse:
		r.ErrorCode = code
	case *kmsg.DeleteGroupsResponse:
		for _, g := range req.(*kmsg.DeleteGroupsRequest).Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, code
			r.Groups = append(r.Groups, rg)
		}
	case *kmsg.OffsetDeleteResponse:
		r.ErrorCode = code
	}
	return resp, nil
}
