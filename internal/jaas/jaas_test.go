package jaas

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const zkServer = `
/* ZooKeeper's server side */
Server {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_super="adminsecret"
       user_alice="alice\"s secret" // an escaped quote
       user_bob=bobsecret;
};

Client {
       org.apache.zookeeper.server.auth.DigestLoginModule REQUIRED
       username="bob"
       password="bobsecret";
};
`

func TestParseZooKeeperFile(t *testing.T) {
	f, err := Parse(zkServer)
	if err != nil {
		t.Fatal(err)
	}
	srv := f["Server"]
	if len(srv) != 1 || srv[0].LoginModule != "org.apache.zookeeper.server.auth.DigestLoginModule" || srv[0].Flag != "required" {
		t.Fatalf("Server section: %+v", srv)
	}
	want := map[string]string{"super": "adminsecret", "alice": `alice"s secret`, "bob": "bobsecret"}
	if got := DigestUsers(srv); !reflect.DeepEqual(got, want) {
		t.Fatalf("users %v, want %v", got, want)
	}
	cl := f["Client"]
	if len(cl) != 1 || cl[0].Flag != "required" || cl[0].Options["username"] != "bob" || cl[0].Options["password"] != "bobsecret" {
		t.Fatalf("Client section: %+v", cl)
	}
}

func TestParseEntriesKafkaInline(t *testing.T) {
	e, err := ParseEntries(`org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="a b" user_admin="a b";`)
	if err != nil {
		t.Fatal(err)
	}
	if len(e) != 1 || e[0].Options["password"] != "a b" || DigestUsers(e)["admin"] != "a b" {
		t.Fatalf("%+v", e)
	}
}

func TestParseEscapesAndComments(t *testing.T) {
	f, err := Parse("A{m.M optional k=\"\\t\\101\\\\x\";\n// x\n m.N sufficient;};\n/* multi\nline */ B { };")
	if err != nil {
		t.Fatal(err)
	}
	if got := f["A"][0].Options["k"]; got != "\tA\\x" {
		t.Fatalf("escapes: %q", got)
	}
	if len(f["A"]) != 2 || f["A"][1].Flag != "sufficient" || len(f["B"]) != 0 {
		t.Fatalf("%+v", f)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Server { m.M required k=v }", "line 1: expected an option name or ';', found '}'"},
		{"Server { m.M always; };", "control flag of m.M"},
		{"Server { m.M required k=\"v\n\"; };", "line 1: a quoted string is not closed on its line"},
		{"Server { m.M required; }", "expected ';', found the end of the file"},
		{"Server { m.M required; };\nServer { };", "line 2: section \"Server\" is given twice"},
		{"Server { m.M required k=; };", "expected the value of option k"},
		{"/* open", "comment is not closed"},
		{"Server m.M", "expected '{'"},
	} {
		_, err := Parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "jaas.conf")
	if err := os.WriteFile(p, []byte("Server {"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("Load: %v", err)
	}
}

func TestJVMProperty(t *testing.T) {
	const key = "java.security.auth.login.config"
	v, ok := JVMProperty(key, "-Xmx1g -D"+key+"=/a.conf", "-D"+key+"=/b.conf -Dzookeeper.superUser=x")
	if !ok || v != "/b.conf" {
		t.Fatalf("got %q %v, want the last one", v, ok)
	}
	if _, ok := JVMProperty(key, "-D"+key+"x=/c", ""); ok {
		t.Fatal("a longer name matched")
	}
}

func TestSingleQuotesAndEmptySections(t *testing.T) {
	if _, err := Parse(`S { a.B required k='v'; };`); err == nil {
		t.Fatal("single quotes were taken (Java's ConfigFile refuses them)")
	}
	f, err := Parse(`S { }; T { a.B required; };`)
	if _, ok := f["S"]; err != nil || ok || len(f["T"]) != 1 {
		t.Fatalf("%v %v", f, err)
	}
}
