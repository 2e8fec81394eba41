package broker

import (
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// DescribeGroups (key 15), v0-5, via kmsg.
//
// As Kafka: a group that does not exist is described as Dead with no
// error; member metadata and assignments are given only when the group
// is Stable; the protocol name is empty while a rebalance is being
// prepared. v3 adds authorized operations (when asked), v4 instance ids.
// A group the principal may not DESCRIBE is GROUP_AUTHORIZATION_FAILED.

func init() { regKey(kproto.KeyDescribeGroups, 0, 5, groupHandler(handleDescribeGroups)) }

func handleDescribeGroups(r groupRequest, req *kmsg.DescribeGroupsRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, name := range req.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group, rg.State = name, groupDead.String()
		rg.AuthorizedOperations = math.MinInt32
		if req.IncludeAuthorizedOperations {
			rg.AuthorizedOperations = r.c.authorizedOperations(authz.ResourceGroup, name)
		}
		if !r.c.allowedGroup(authz.OpDescribe, name) {
			resp.Groups = append(resp.Groups, deniedDescribedGroup(name))
			continue
		}
		if name == "" {
			rg.ErrorCode = ec(kproto.CodeInvalidGroupID)
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		g, code := r.c.b.groups.lookup(name, false)
		if code != 0 || g == nil {
			rg.ErrorCode = code
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		g.mu.Lock()
		rg.State, rg.ProtocolType = g.state.String(), g.protocolType
		if g.state != groupPreparingRebalance {
			rg.Protocol = g.protocol
		}
		for _, m := range g.members {
			rm := kmsg.NewDescribeGroupsResponseGroupMember()
			rm.MemberID, rm.ClientID, rm.ClientHost = m.id, m.clientID, m.host
			if m.instanceID != "" {
				rm.InstanceID = kmsg.StringPtr(m.instanceID)
			}
			if g.state == groupStable {
				rm.ProtocolMetadata = m.metadataFor(g.protocol)
				rm.MemberAssignment = m.assignment
			}
			rg.Members = append(rg.Members, rm)
		}
		g.mu.Unlock()
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}
