package zkmeta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zkafka/zkafka/broker/authz"
)

// The ACL znodes, as Kafka's AclAuthorizer writes them in ZooKeeper mode
// (ZkData.scala: LiteralAclStore, ExtendedAclStore and their change
// stores):
//
//	/kafka-acl/{Type}/{name}                    literal patterns: AclsZNode JSON
//	/kafka-acl-extended/prefixed/{Type}/{name}  prefixed patterns: the same JSON
//	/kafka-acl-changes/acl_changes_NNNNNNNNNN   literal change: "TOPIC:name" (persistent sequential)
//	/kafka-acl-extended-changes/acl_changes_N   prefixed change: ExtendedACLChangeZNode JSON
//
// {Type} is Topic, Group, Cluster, TransactionalId, DelegationToken or
// User. A pattern's znode version is the compare-and-set token of its
// updates; a pattern left without ACLs has its znode deleted.

const (
	LiteralACLPath        = "/kafka-acl"
	ExtendedACLPath       = "/kafka-acl-extended"
	PrefixedACLPath       = ExtendedACLPath + "/prefixed"
	LiteralACLChangesPath = "/kafka-acl-changes"
	ExtendedACLChanges    = "/kafka-acl-extended-changes"
	ACLChangePrefix       = "acl_changes_"
)

// ACLPaths are the znodes AclAuthorizer creates when it starts
// (KafkaZkClient.createAclPaths): each store with a directory per
// resource type, and both change paths.
func ACLPaths() []string {
	var out []string
	for _, store := range []string{LiteralACLPath, ExtendedACLPath, PrefixedACLPath} {
		out = append(out, store)
		if store == ExtendedACLPath {
			continue
		}
		for _, t := range authz.ResourceTypes {
			out = append(out, store+"/"+t.String())
		}
	}
	return append(out, LiteralACLChangesPath, ExtendedACLChanges)
}

// ACLStorePath is the directory of a pattern type's ACLs.
func ACLStorePath(pt authz.PatternType) string {
	if pt == authz.PatternPrefixed {
		return PrefixedACLPath
	}
	return LiteralACLPath
}

// ACLPath is the znode of one pattern's ACLs.
func ACLPath(p authz.Pattern) string {
	return ACLStorePath(p.PatternType) + "/" + p.Type.String() + "/" + p.Name
}

// ACLChangesPath is where a pattern's change notifications go.
func ACLChangesPath(pt authz.PatternType) string {
	if pt == authz.PatternLiteral {
		return LiteralACLChangesPath
	}
	return ExtendedACLChanges
}

// AclsZNode is the JSON of a pattern's znode (AclEntry.toJsonCompatibleMap).
type AclsZNode struct {
	Version int           `json:"version"`
	ACLs    []AclZNodeACL `json:"acls"`
}

// AclZNodeACL is one entry: names as SecurityUtils writes them ("Allow",
// "Read", "ClusterAction").
type AclZNodeACL struct {
	Principal      string `json:"principal"`
	PermissionType string `json:"permissionType"`
	Operation      string `json:"operation"`
	Host           string `json:"host"`
}

// ExtendedACLChangeZNode is a prefixed change notification
// (ExtendedAclChangeEvent): Java enum names for the types.
type ExtendedACLChangeZNode struct {
	Version      int    `json:"version"`
	ResourceType string `json:"resourceType"`
	Name         string `json:"name"`
	PatternType  string `json:"patternType"`
}

// kafkaJSON encodes v as Kafka's Jackson does: no HTML escaping.
func kafkaJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only our own static types are encoded
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// EncodeACLs is the znode data of entries.
func EncodeACLs(entries []authz.Entry) []byte {
	z := AclsZNode{Version: 1, ACLs: []AclZNodeACL{}}
	for _, e := range entries {
		z.ACLs = append(z.ACLs, AclZNodeACL{e.Principal, e.Permission.String(), e.Operation.String(), e.Host})
	}
	return kafkaJSON(z)
}

// DecodeACLs reads a pattern's znode (empty data: no ACLs, as Kafka).
func DecodeACLs(data []byte) ([]authz.Entry, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var z AclsZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return nil, err
	}
	if z.Version != 1 {
		return nil, fmt.Errorf("ACL znode version %d, want 1", z.Version)
	}
	var out []authz.Entry
	for _, a := range z.ACLs {
		e := authz.Entry{Principal: a.Principal, Host: a.Host,
			Operation: authz.ParseOperation(a.Operation), Permission: authz.ParsePermission(a.PermissionType)}
		if !authz.ValidPrincipal(e.Principal) || !e.Operation.Known() || !e.Permission.Known() {
			return nil, fmt.Errorf("ACL %+v: unknown principal, operation or permission type", a)
		}
		out = append(out, e)
	}
	return out, nil
}

// EncodeACLChange is the notification of a change to p's ACLs.
func EncodeACLChange(p authz.Pattern) []byte {
	if p.PatternType == authz.PatternLiteral {
		return []byte(p.Type.EnumName() + ":" + p.Name)
	}
	return kafkaJSON(ExtendedACLChangeZNode{Version: 1, ResourceType: p.Type.EnumName(), Name: p.Name,
		PatternType: p.PatternType.String()})
}

// DecodeACLChange reads a notification found under changesPath.
func DecodeACLChange(changesPath string, data []byte) (authz.Pattern, error) {
	if changesPath == LiteralACLChangesPath {
		t, name, ok := strings.Cut(string(data), ":")
		p := authz.Pattern{Type: authz.ParseResourceType(t), Name: name, PatternType: authz.PatternLiteral}
		if !ok || !p.Type.Known() || p.Type == authz.ResourceAny {
			return p, fmt.Errorf("ACL change %q: want ResourceType:name", data)
		}
		return p, nil
	}
	var z ExtendedACLChangeZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return authz.Pattern{}, err
	}
	p := authz.Pattern{Type: authz.ParseResourceType(z.ResourceType), Name: z.Name, PatternType: authz.ParsePatternType(z.PatternType)}
	if z.Version > 1 || !p.Type.Known() || p.Type == authz.ResourceAny || p.PatternType != authz.PatternPrefixed {
		return p, fmt.Errorf("ACL change %s: unknown version, resource or pattern type", data)
	}
	return p, nil
}
