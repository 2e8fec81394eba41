package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
)

// DescribeAcls (key 29), v0-3, via kmsg: the ACLs matching the filter
// (AclBindingFilter's rules: authz.Filter), grouped by pattern in the
// order of Kafka's ACL cache (resource type, pattern type, name
// descending; Kafka's own grouping is a HashMap's). Needs DESCRIBE on
// CLUSTER; SECURITY_DISABLED without an authorizer (acl_apis.go).

func init() { regKey(int16(kmsg.DescribeACLs), 0, 3, kmsgHandler(handleDescribeACLs)) }

func handleDescribeACLs(c *conn, req *kmsg.DescribeACLsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	f, err := filterOf(req.Version, req.ResourceType, req.ResourceName, req.ResourcePatternType,
		req.Principal, req.Host, req.Operation, req.PermissionType, false)
	if err != nil {
		return nil, err
	}
	if r := c.aclGate(authz.OpDescribe, msgNoAuthorizerOnBroker); r != nil {
		resp.ErrorCode, resp.ErrorMessage = r.code, r.msg
		return resp, nil
	}
	var cur *kmsg.DescribeACLsResponseResource
	for _, bd := range c.b.acls.cache.Bindings(&f) {
		p := bd.Pattern
		if cur == nil || cur.ResourceType != kmsg.ACLResourceType(p.Type) || cur.ResourceName != p.Name ||
			cur.ResourcePatternType != kmsg.ACLResourcePatternType(p.PatternType) {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName, r.ResourcePatternType = kmsg.ACLResourceType(p.Type), p.Name, kmsg.ACLResourcePatternType(p.PatternType)
			resp.Resources = append(resp.Resources, r)
			cur = &resp.Resources[len(resp.Resources)-1]
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host = bd.Entry.Principal, bd.Entry.Host
		a.Operation, a.PermissionType = kmsg.ACLOperation(bd.Entry.Operation), kmsg.ACLPermissionType(bd.Entry.Permission)
		cur.ACLs = append(cur.ACLs, a)
	}
	return resp, nil
}
