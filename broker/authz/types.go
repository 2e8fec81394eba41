package authz

import "strings"

// Operation is an ACL operation, with Kafka's AclOperation codes.
type Operation int8

const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1 // filters only
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

// operationNames are SecurityUtils.operationName's camel-case names, as
// the ACL znodes carry them.
var operationNames = [...]string{"Unknown", "Any", "All", "Read", "Write", "Create", "Delete", "Alter",
	"Describe", "ClusterAction", "DescribeConfigs", "AlterConfigs", "IdempotentWrite", "CreateTokens", "DescribeTokens"}

// ResourceType is an ACL resource type, with Kafka's ResourceType codes.
type ResourceType int8

const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1 // filters only
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// resourceTypeNames are SecurityUtils.resourceTypeName's names, the
// directories under /kafka-acl.
var resourceTypeNames = [...]string{"Unknown", "Any", "Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"}

// enumNames are the Java enum names (ResourceType.name()), which the
// change notifications carry.
var resourceEnumNames = [...]string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}

// ResourceTypes are the concrete resource types (AclEntry.ResourceTypes).
var ResourceTypes = []ResourceType{ResourceTopic, ResourceGroup, ResourceCluster, ResourceTransactionalID, ResourceDelegationToken, ResourceUser}

// PatternType is how a pattern's name matches, with Kafka's PatternType
// codes.
type PatternType int8

const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1 // filters only: either kind, the name compared exactly
	PatternMatch    PatternType = 2 // filters only: the patterns that would apply to the name
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

var patternTypeNames = [...]string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}

// Permission is Allow or Deny, with Kafka's AclPermissionType codes.
type Permission int8

const (
	PermUnknown Permission = 0
	PermAny     Permission = 1 // filters only
	PermDeny    Permission = 2
	PermAllow   Permission = 3
)

var permissionNames = [...]string{"Unknown", "Any", "Deny", "Allow"}

// ClusterName is the only name of the CLUSTER resource.
const ClusterName = "kafka-cluster"

// Wildcards: a literal pattern named "*" applies to every resource of its
// type; the principal "User:*" and the host "*" match every principal and
// host.
const (
	WildcardResource  = "*"
	WildcardPrincipal = "User:*"
	WildcardHost      = "*"
)

func name[T ~int8](names []string, v T) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return names[0]
}

func parse[T ~int8](names []string, s string) T {
	for i, n := range names {
		if strings.EqualFold(n, s) || strings.EqualFold(strings.ReplaceAll(n, "_", ""), strings.ReplaceAll(s, "_", "")) {
			return T(i)
		}
	}
	return 0
}

func (o Operation) String() string    { return name(operationNames[:], o) }
func (t ResourceType) String() string { return name(resourceTypeNames[:], t) }
func (p PatternType) String() string  { return name(patternTypeNames[:], p) }
func (p Permission) String() string   { return name(permissionNames[:], p) }

// EnumName is the resource type's Java enum name (TOPIC, TRANSACTIONAL_ID).
func (t ResourceType) EnumName() string { return name(resourceEnumNames[:], t) }

// ParseOperation reads an operation name ("Read", "READ",
// "ClusterAction", "CLUSTER_ACTION"); OpUnknown if it is none.
func ParseOperation(s string) Operation { return parse[Operation](operationNames[:], s) }

// ParseResourceType reads a resource type name ("Topic", "TOPIC",
// "TransactionalId", "TRANSACTIONAL_ID").
func ParseResourceType(s string) ResourceType {
	return parse[ResourceType](resourceTypeNames[:], s)
}

// ParsePatternType reads "LITERAL", "PREFIXED" (any case).
func ParsePatternType(s string) PatternType { return parse[PatternType](patternTypeNames[:], s) }

// ParsePermission reads "Allow" or "Deny" (any case).
func ParsePermission(s string) Permission { return parse[Permission](permissionNames[:], s) }

// Known reports whether a code read from the wire is one Kafka knows (a
// code it does not know is UNKNOWN to Kafka, and a request with one is
// refused).
func (o Operation) Known() bool    { return o > OpUnknown && int(o) < len(operationNames) }
func (t ResourceType) Known() bool { return t > ResourceUnknown && int(t) < len(resourceTypeNames) }
func (p PatternType) Known() bool  { return p > PatternUnknown && int(p) < len(patternTypeNames) }
func (p Permission) Known() bool   { return p > PermUnknown && int(p) < len(permissionNames) }

// Pattern is a resource pattern (ResourcePattern): a concrete type, a
// name and LITERAL or PREFIXED.
type Pattern struct {
	Type        ResourceType
	Name        string
	PatternType PatternType
}

// Entry is an access control entry: who, from where, what, allowed or
// denied. Principal is "Type:name" (User:alice).
type Entry struct {
	Principal  string
	Host       string
	Operation  Operation
	Permission Permission
}

// Binding is an ACL: an entry on a pattern.
type Binding struct {
	Pattern Pattern
	Entry   Entry
}

// ValidPrincipal is SecurityUtils.parseKafkaPrincipal's rule: "Type:name",
// a colon somewhere.
func ValidPrincipal(p string) bool { return strings.Contains(p, ":") }

// Implied are the operations whose Allow also allows op.
func Implied(op Operation) []Operation {
	switch op {
	case OpDescribe:
		return []Operation{OpDescribe, OpRead, OpWrite, OpDelete, OpAlter}
	case OpDescribeConfigs:
		return []Operation{OpDescribeConfigs, OpAlterConfigs}
	}
	return []Operation{op}
}

// SupportedOperations are the operations that apply to a resource type
// (AclEntry.supportedOperations), in the order of their codes: the bits
// of the authorized-operations fields.
func SupportedOperations(t ResourceType) []Operation {
	switch t {
	case ResourceTopic:
		return []Operation{OpRead, OpWrite, OpCreate, OpDelete, OpAlter, OpDescribe, OpDescribeConfigs, OpAlterConfigs}
	case ResourceGroup:
		return []Operation{OpRead, OpDelete, OpDescribe}
	case ResourceCluster:
		return []Operation{OpCreate, OpAlter, OpDescribe, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite}
	case ResourceTransactionalID:
		return []Operation{OpWrite, OpDescribe}
	case ResourceDelegationToken:
		return []Operation{OpDescribe}
	case ResourceUser:
		return []Operation{OpCreateTokens, OpDescribeTokens}
	}
	return nil
}
