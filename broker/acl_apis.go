package broker

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// What CreateAcls (30), DescribeAcls (29) and DeleteAcls (31) share, as
// Kafka's AclApis and AclAuthorizer answer them:
//
//   - a request whose codes Kafka does not know (UNKNOWN or out of range)
//     or, in v0, a pattern type other than LITERAL (DeleteAcls: or ANY)
//     fails to parse in Kafka, which closes the connection: so does zkafka;
//   - DESCRIBE (DescribeAcls) or ALTER (the others) on CLUSTER is needed:
//     CLUSTER_AUTHORIZATION_FAILED otherwise;
//   - without an authorizer: SECURITY_DISABLED.
//
// The error messages are Kafka's, except that Kafka's cluster
// authorization failure names its internal request object.

var (
	msgNoAuthorizer         = "No Authorizer is configured."
	msgNoAuthorizerOnBroker = "No Authorizer is configured on the broker"
	msgNotAuthorized        = "Request is not authorized."
)

// aclResult is one outcome: an error code and Kafka's message (nil for
// none or for UNKNOWN_SERVER_ERROR, whose message Kafka never sends).
type aclResult struct {
	code int16
	msg  *string
}

func aclError(code kproto.ErrorCode, msg string) aclResult { return aclResult{int16(code), &msg} }

var errUnknownACLElement = errors.New("ACL request contains UNKNOWN elements")

// aclGate is the checks before any ACL API's work: nil when it may
// proceed, else the result every entry of the response gets.
func (c *conn) aclGate(op authz.Operation, noAuthorizerMsg string) *aclResult {
	if c.b.acls == nil {
		r := aclError(codeSecurityDisabled, noAuthorizerMsg)
		return &r
	}
	if !c.allowedCluster(op) {
		r := aclError(kproto.CodeClusterAuthorizationFailed, msgNotAuthorized)
		return &r
	}
	return nil
}

// checkCodes closes the connection on codes Kafka cannot parse.
func checkCodes(version int16, pt authz.PatternType, anyOK bool, known ...bool) error {
	for _, k := range known {
		if !k {
			return errUnknownACLElement
		}
	}
	if version == 0 && pt != authz.PatternLiteral && !(anyOK && pt == authz.PatternAny) {
		return fmt.Errorf("version 0 does not support pattern type %s", pt)
	}
	return nil
}

// filterOf is a kmsg filter as authz's.
func filterOf(version int16, rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType,
	principal, host *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType, anyOK bool) (authz.Filter, error) {
	f := authz.Filter{Type: authz.ResourceType(rt), Name: name, PatternType: authz.PatternType(pt),
		Principal: principal, Host: host, Operation: authz.Operation(op), Permission: authz.Permission(perm)}
	if version == 0 {
		f.PatternType = authz.PatternLiteral // not on the wire: the schema's default
	}
	err := checkCodes(version, f.PatternType, anyOK, f.Type.Known(), f.PatternType.Known(), f.Operation.Known(), f.Permission.Known())
	return f, err
}

// createACLs is AclAuthorizer.createAcls for the bindings AclApis let
// through: a name with "/" is INVALID_REQUEST; the bindings of one
// pattern are written together, and all fail together (a principal
// without a type fails its pattern with UNKNOWN_SERVER_ERROR, as the
// IllegalArgumentException Kafka throws there).
func (a *aclAuthorizer) createACLs(bindings []authz.Binding, results []aclResult, valid []bool) {
	var order []authz.Pattern
	byPattern := map[authz.Pattern][]int{}
	for i, bd := range bindings {
		if !valid[i] {
			continue
		}
		if strings.Contains(bd.Pattern.Name, "/") {
			results[i] = aclError(kproto.CodeInvalidRequest, "Failed to create ACL")
			continue
		}
		if byPattern[bd.Pattern] == nil {
			order = append(order, bd.Pattern)
		}
		byPattern[bd.Pattern] = append(byPattern[bd.Pattern], i)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range order {
		idx := byPattern[p]
		var add []authz.Entry
		ok := true
		for _, i := range idx {
			add = append(add, bindings[i].Entry)
			ok = ok && authz.ValidPrincipal(bindings[i].Entry.Principal)
		}
		var err error
		if ok {
			_, err = a.updateResourceLocked(p, func(cur []authz.Entry) []authz.Entry { return authz.Union(cur, add) })
			if err != nil {
				a.b.log.Warn("creating ACLs", "resource", p, "err", err)
			}
		}
		for _, i := range idx {
			if !ok || err != nil {
				results[i] = aclResult{code: int16(kproto.CodeUnknownServerError)}
			}
		}
	}
}

// deletedACL is one binding a DeleteAcls filter removed, with the error
// if its pattern's update failed.
type deletedACL struct {
	binding authz.Binding
	result  aclResult
}

// deleteACLs is AclAuthorizer.deleteAcls: every cached pattern, and the
// exact patterns the filters name (which may be in ZooKeeper and not yet
// here), that some filter matches is updated without the entries the
// filters match; each removed binding is credited to the first filter
// that matches it.
func (a *aclAuthorizer) deleteACLs(filters []authz.Filter) [][]deletedACL {
	out := make([][]deletedACL, len(filters))
	a.mu.Lock()
	defer a.mu.Unlock()
	patterns := a.cache.Patterns()
	seen := map[authz.Pattern]bool{}
	for _, p := range patterns {
		seen[p] = true
	}
	for i := range filters {
		for _, p := range filters[i].ExactPatterns() {
			if !seen[p] {
				seen[p] = true
				patterns = append(patterns, p)
			}
		}
	}
	for _, p := range patterns {
		matched := false
		for i := range filters {
			matched = matched || filters[i].MatchesPattern(p)
		}
		if !matched {
			continue
		}
		var credited [][]authz.Entry
		_, err := a.updateResourceLocked(p, func(cur []authz.Entry) []authz.Entry {
			var keep []authz.Entry
			keep, credited = authz.Remove(p, cur, filters)
			return keep
		})
		res := aclResult{}
		if err != nil {
			a.b.log.Warn("deleting ACLs", "resource", p, "err", err)
			res = aclResult{code: int16(kproto.CodeUnknownServerError)}
		}
		for i, es := range credited {
			for _, e := range es {
				out[i] = append(out[i], deletedACL{authz.Binding{Pattern: p, Entry: e}, res})
			}
		}
	}
	return out
}
