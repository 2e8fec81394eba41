package broker

import (
	"fmt"
	"strings"

	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/internal/x509name"
)

// AuthzConfig is the authorizer's keys, as Kafka 3.7 reads them in
// ZooKeeper mode.
type AuthzConfig struct {
	// ClassName is authorizer.class.name: empty (no authorizer: every
	// request is allowed, the ACL APIs answer SECURITY_DISABLED) or
	// kafka.security.authorizer.AclAuthorizer.
	ClassName string
	// SuperUsers is super.users ("User:admin;User:broker"): principals
	// allowed everything.
	SuperUsers []string
	// AllowEveryoneIfNoACL is allow.everyone.if.no.acl.found (false): a
	// resource no ACL applies to is open to everyone.
	AllowEveryoneIfNoACL bool
	// PrincipalMappingRules is ssl.principal.mapping.rules (DEFAULT): how
	// a client certificate's DN becomes its principal's name
	// (x509name.Mapper, Kafka's SslPrincipalMapper).
	PrincipalMappingRules string
}

// AclAuthorizerClass is the one authorizer zkafka has.
const AclAuthorizerClass = "kafka.security.authorizer.AclAuthorizer"

// Enabled reports whether an authorizer is configured.
func (a *AuthzConfig) Enabled() bool { return a.ClassName != "" }

// parseProperty reads one of the authorizer's keys; ok is false for
// other keys.
func (a *AuthzConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "authorizer.class.name":
		a.ClassName = v
		return true, checkAuthorizerClass(v)
	case "super.users":
		a.SuperUsers, err = parseSuperUsers(v)
		return true, err
	case "ssl.principal.mapping.rules":
		a.PrincipalMappingRules = v
		_, err := x509name.ParseMappingRules(v)
		return true, err
	case "allow.everyone.if.no.acl.found":
		// Kafka reads it with Scala's toBoolean: "true" or "false", any case.
		switch strings.ToLower(v) {
		case "true", "false":
			a.AllowEveryoneIfNoACL = strings.EqualFold(v, "true")
		default:
			return true, fmt.Errorf("must be true or false")
		}
		return true, nil
	}
	return false, nil
}

// checkAuthorizerClass refuses the classes Kafka 3.7 cannot load in
// ZooKeeper mode, naming the one to use.
func checkAuthorizerClass(v string) error {
	switch v {
	case "", AclAuthorizerClass:
		return nil
	case "kafka.security.auth.SimpleAclAuthorizer":
		return fmt.Errorf("SimpleAclAuthorizer was removed in Kafka 3.0 (KAFKA-12590); use %s, which reads the same ACLs", AclAuthorizerClass)
	case "org.apache.kafka.metadata.authorizer.StandardAuthorizer":
		return fmt.Errorf("StandardAuthorizer is KRaft's; in ZooKeeper mode use %s", AclAuthorizerClass)
	}
	return fmt.Errorf("class not found: the only authorizer is %s", AclAuthorizerClass)
}

// parseSuperUsers splits super.users at ";" (trailing empty entries
// dropped, as Java's String.split) into "Type:name" principals.
func parseSuperUsers(v string) ([]string, error) {
	if v == "" {
		return nil, nil
	}
	parts := strings.Split(v, ";")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	var out []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if !authz.ValidPrincipal(p) {
			return nil, fmt.Errorf("%q: expected a string in format principalType:principalName", p)
		}
		out = append(out, p)
	}
	return out, nil
}
