package x509name

import "testing"

// The cases of Kafka's SslPrincipalMapperTest that Go's regular
// expressions can express, and the replacement rules.
func TestMappingRules(t *testing.T) {
	for _, tc := range []struct {
		rules, dn, want string
		fails           bool
	}{
		{"DEFAULT", "CN=Duke,OU=JavaSoft,O=Sun Microsystems", "CN=Duke,OU=JavaSoft,O=Sun Microsystems", false},
		{"", "CN=Duke,OU=JavaSoft", "CN=Duke,OU=JavaSoft", false},
		{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=kafka1,OU=ServiceUsers,O=Example", "kafka1", false},
		{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=Duke,OU=JavaSoft", "CN=Duke,OU=JavaSoft", false},
		{"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", "CN=Duke,OU=JavaSoft", "", true},
		{"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L", "CN=Duke,OU=JavaSoft,O=Sun,L=X,ST=Y,C=US", "duke@javasoft", false},
		{"RULE:^CN=(.*?),OU=(.*?)$/$1@$2/U", "CN=Duke,OU=JavaSoft", "DUKE@JAVASOFT", false},
		{"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L, DEFAULT", "OU=Fruit,CN=Banana.Com,O=X", "banana.com", false},
		{"RULE:^CN=(.*?),OU=(.*?)$/$1\\/$2/", "CN=a,OU=b", "a/b", false},
		{"RULE:^CN=(.*?)$/$3-$1/", "CN=a", "$3-a", false}, // past the last group: literal
		{"RULE:^CN=(.*?)$/\\$1=$1/", "CN=a", "$1=a", false},
		{"  RULE:^CN=([^,]*),.*$/$1/  ,  DEFAULT  ", "CN=bob,O=x", "bob", false},
	} {
		m, err := ParseMappingRules(tc.rules)
		if err != nil {
			t.Errorf("%q: %v", tc.rules, err)
			continue
		}
		got, err := m.Name(tc.dn)
		if (err != nil) != tc.fails || got != tc.want {
			t.Errorf("%q on %q: %q, %v; want %q (error %v)", tc.rules, tc.dn, got, err, tc.want, tc.fails)
		}
	}
	for _, bad := range []string{"RULE:^CN=(.*$/$1/", "DEFAULTS"} {
		if _, err := ParseMappingRules(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
