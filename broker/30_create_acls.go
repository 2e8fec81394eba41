package broker

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// CreateAcls (key 30), v0-3, via kmsg, as AclApis.handleCreateAcls and
// AclAuthorizer.createAcls: one result per creation, in order.
//
//   - a creation with resource type ANY, pattern type MATCH or ANY,
//     operation ANY or permission ANY makes Kafka's handler throw before
//     it creates anything: every result is UNKNOWN_SERVER_ERROR;
//   - CLUSTER with a name other than kafka-cluster, or an empty name:
//     INVALID_REQUEST with Kafka's message; a name with "/":
//     INVALID_REQUEST "Failed to create ACL"; a principal without a type
//     ("alice"): UNKNOWN_SERVER_ERROR for its pattern's creations;
//   - the rest are written to ZooKeeper (acl_authorizer.go); an ACL that
//     exists already is a success.
//
// Needs ALTER on CLUSTER; SECURITY_DISABLED without an authorizer.

func init() { regKey(int16(kmsg.CreateACLs), 0, 3, kmsgHandler(handleCreateACLs)) }

func handleCreateACLs(c *conn, req *kmsg.CreateACLsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	bindings := make([]authz.Binding, len(req.Creations))
	results := make([]aclResult, len(req.Creations))
	valid := make([]bool, len(req.Creations))
	abort := false
	for i, cr := range req.Creations {
		bd := authz.Binding{
			Pattern: authz.Pattern{Type: authz.ResourceType(cr.ResourceType), Name: cr.ResourceName, PatternType: authz.PatternType(cr.ResourcePatternType)},
			Entry:   authz.Entry{Principal: cr.Principal, Host: cr.Host, Operation: authz.Operation(cr.Operation), Permission: authz.Permission(cr.PermissionType)},
		}
		if req.Version == 0 {
			bd.Pattern.PatternType = authz.PatternLiteral
		}
		if err := checkCodes(req.Version, bd.Pattern.PatternType, false, bd.Pattern.Type.Known(), bd.Pattern.PatternType.Known(),
			bd.Entry.Operation.Known(), bd.Entry.Permission.Known()); err != nil {
			return nil, err
		}
		bindings[i] = bd
		switch p := bd.Pattern; {
		case p.Type == authz.ResourceAny || p.PatternType == authz.PatternMatch || p.PatternType == authz.PatternAny ||
			bd.Entry.Operation == authz.OpAny || bd.Entry.Permission == authz.PermAny:
			abort = true // ResourcePattern's or AccessControlEntry's constructor throws
		case p.Type == authz.ResourceCluster && p.Name != authz.ClusterName:
			results[i] = aclError(kproto.CodeInvalidRequest, "The only valid name for the CLUSTER resource is "+authz.ClusterName)
		case p.Name == "":
			results[i] = aclError(kproto.CodeInvalidRequest, "Invalid empty resource name")
		default:
			valid[i] = true
		}
	}
	gate := c.aclGate(authz.OpAlter, msgNoAuthorizer)
	if gate == nil && abort {
		gate = &aclResult{code: int16(kproto.CodeUnknownServerError)}
	}
	if gate == nil {
		c.b.acls.createACLs(bindings, results, valid)
	}
	for i := range req.Creations {
		r := kmsg.NewCreateACLsResponseResult()
		if gate != nil {
			r.ErrorCode, r.ErrorMessage = gate.code, gate.msg
		} else {
			r.ErrorCode, r.ErrorMessage = results[i].code, results[i].msg
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
