package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
)

// DeleteAcls (key 31), v0-3, via kmsg: one result per filter with the
// ACLs it removed (AclAuthorizer.deleteAcls: each ACL credited to the
// first filter matching it; see aclAuthorizer.deleteACLs). In v0 a filter
// is LITERAL (ANY is accepted too, as Kafka). Needs ALTER on CLUSTER;
// SECURITY_DISABLED without an authorizer.

func init() { regKey(int16(kmsg.DeleteACLs), 0, 3, kmsgHandler(handleDeleteACLs)) }

func handleDeleteACLs(c *conn, req *kmsg.DeleteACLsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	filters := make([]authz.Filter, len(req.Filters))
	for i, rf := range req.Filters {
		f, err := filterOf(req.Version, rf.ResourceType, rf.ResourceName, rf.ResourcePatternType,
			rf.Principal, rf.Host, rf.Operation, rf.PermissionType, true)
		if err != nil {
			return nil, err
		}
		filters[i] = f
	}
	if r := c.aclGate(authz.OpAlter, msgNoAuthorizer); r != nil {
		for range req.Filters {
			fr := kmsg.NewDeleteACLsResponseResult()
			fr.ErrorCode, fr.ErrorMessage = r.code, r.msg
			resp.Results = append(resp.Results, fr)
		}
		return resp, nil
	}
	for _, deleted := range c.b.acls.deleteACLs(filters) {
		fr := kmsg.NewDeleteACLsResponseResult()
		for _, d := range deleted {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ErrorCode, m.ErrorMessage = d.result.code, d.result.msg
			p, e := d.binding.Pattern, d.binding.Entry
			m.ResourceType, m.ResourceName, m.ResourcePatternType = kmsg.ACLResourceType(p.Type), p.Name, kmsg.ACLResourcePatternType(p.PatternType)
			m.Principal, m.Host = e.Principal, e.Host
			m.Operation, m.PermissionType = kmsg.ACLOperation(e.Operation), kmsg.ACLPermissionType(e.Permission)
			fr.MatchingACLs = append(fr.MatchingACLs, m)
		}
		resp.Results = append(resp.Results, fr)
	}
	return resp, nil
}
