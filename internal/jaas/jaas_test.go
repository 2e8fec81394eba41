package jaas

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseFile(t *testing.T) {
	src := `// the broker's users
KafkaServer {
   org.apache.kafka.common.security.plain.PlainLoginModule required
   username="admin"
   password="admin-secret"
   user_admin="admin-secret"
   user_alice='alice "quoted" \\ secret';
   /* SCRAM users live in ZooKeeper */
   org.apache.kafka.common.security.scram.ScramLoginModule required;
};
sasl_ssl.KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule Required user_bob=bobpw; };
Client {
   org.apache.zookeeper.server.auth.DigestLoginModule required
   username="kafka" password="zk-secret";
};
`
	c, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		"KafkaServer": {
			{Class: "org.apache.kafka.common.security.plain.PlainLoginModule", Flag: "required", Options: map[string]string{
				"username": "admin", "password": "admin-secret", "user_admin": "admin-secret", "user_alice": `alice "quoted" \ secret`}},
			{Class: "org.apache.kafka.common.security.scram.ScramLoginModule", Flag: "required", Options: map[string]string{}},
		},
		"sasl_ssl.KafkaServer": {{Class: "org.apache.kafka.common.security.plain.PlainLoginModule", Flag: "required", Options: map[string]string{"user_bob": "bobpw"}}},
		"Client":               {{Class: "org.apache.zookeeper.server.auth.DigestLoginModule", Flag: "required", Options: map[string]string{"username": "kafka", "password": "zk-secret"}}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %#v\nwant %#v", c, want)
	}
	if v, ok := Option(c["Client"], "DigestLoginModule", "password"); !ok || v != "zk-secret" {
		t.Fatalf("Option: %q %v", v, ok)
	}
}

func TestParseModules(t *testing.T) {
	mods, err := ParseModules(`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="pw" user_admin="pw" user_x="a b";`)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 1 || mods[0].Options["user_x"] != "a b" || mods[0].Options["username"] != "admin" {
		t.Fatalf("got %#v", mods)
	}
}

// TestParseErrors: bad input is refused with the line, and never with the
// text of a value (it may be a password).
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`KafkaServer { m required password="s3cret" };`, `want an option name or ';', got '}'`},
		{`KafkaServer { m required password=s3cret other };`, `want '=', got '}'`},
		{`KafkaServer { m mandatory; };`, "want a flag"},
		{`KafkaServer { m required password="s3cret`, "unterminated quoted string"},
		{`KafkaServer m required;`, `want '{'`},
		{`KafkaServer { m required; }`, `want ';', got the end`},
		{`/* open`, "unterminated /* comment"},
	} {
		_, err := Parse(tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %v, want %q", tc.src, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Parse(%q): the error shows the password: %v", tc.src, err)
		}
	}
	if _, err := ParseModules(" "); err == nil {
		t.Error("ParseModules of nothing: no error")
	}
}

func TestJVMProperty(t *testing.T) {
	for _, tc := range []struct {
		flags, want string
		ok          bool
	}{
		{"-Xmx1G -Djava.security.auth.login.config=/etc/kafka/jaas.conf", "/etc/kafka/jaas.conf", true},
		{`-Djava.security.auth.login.config="/etc/my kafka/jaas.conf" -Dx=y`, "/etc/my kafka/jaas.conf", true},
		{"-Djava.security.auth.login.config=/a -Djava.security.auth.login.config=/b", "/b", true},
		{"-Djava.security.auth.login.configX=/a", "", false},
		{"", "", false},
	} {
		v, ok := JVMProperty(tc.flags, "java.security.auth.login.config")
		if v != tc.want || ok != tc.ok {
			t.Errorf("JVMProperty(%q) = %q %v, want %q %v", tc.flags, v, ok, tc.want, tc.ok)
		}
	}
}
