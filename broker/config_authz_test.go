package broker

import (
	"slices"
	"strings"
	"testing"
)

func TestAuthorizerConfig(t *testing.T) {
	cfg, err := ParseProperties(strings.NewReader("authorizer.class.name=kafka.security.authorizer.AclAuthorizer\n"+
		"super.users=User:admin; User:CN=broker,O=zkafka;\nallow.everyone.if.no.acl.found=TRUE\nssl.principal.mapping.rules=DEFAULT\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Authz
	if !a.Enabled() || !a.AllowEveryoneIfNoACL || !slices.Equal(a.SuperUsers, []string{"User:admin", "User:CN=broker,O=zkafka"}) {
		t.Fatalf("Authz = %+v", a)
	}
	if cfg, err := ParseProperties(strings.NewReader("ssl.principal.mapping.rules=RULE:^CN=(.*?),O=.*$/$1/L, DEFAULT\n"), nil); err != nil ||
		cfg.Authz.PrincipalMappingRules != "RULE:^CN=(.*?),O=.*$/$1/L, DEFAULT" {
		t.Errorf("mapping rules: %v %q", err, cfg.Authz.PrincipalMappingRules)
	}
	if cfg, _ := ParseProperties(strings.NewReader(""), nil); cfg.Authz.Enabled() || cfg.Authz.AllowEveryoneIfNoACL {
		t.Fatalf("default Authz = %+v", cfg.Authz)
	}
	for _, bad := range []struct{ line, want string }{
		{"authorizer.class.name=kafka.security.auth.SimpleAclAuthorizer", "removed in Kafka 3.0"},
		{"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer", "KRaft"},
		{"authorizer.class.name=com.example.Mine", "class not found"},
		{"super.users=admin", "principalType:principalName"},
		{"super.users=User:a;;User:b", "principalType:principalName"},
		{"allow.everyone.if.no.acl.found=yes", "true or false"},
		{"ssl.principal.mapping.rules=RULE:^CN=(.*$/$1/", "ssl.principal.mapping.rules"},
	} {
		_, err := ParseProperties(strings.NewReader(bad.line+"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error with %q", bad.line, err, bad.want)
		}
	}
}
