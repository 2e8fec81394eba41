//go:build compat

package zksasl

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/differential"
	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

const serverJAAS = `Server {
       org.apache.zookeeper.server.auth.DigestLoginModule required
       user_alice="alice-secret"
       user_bob="bob-secret"
       user_admin="admin-secret";
};
`

const saslProvider = "authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// clientJAAS is a JAAS file with the Client section zkCli.sh logs in with.
func clientJAAS(t *testing.T, user, password string) string {
	return writeFile(t, user+"-client.jaas", "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  username=\""+
		user+"\"\n  password=\""+password+"\";\n};\n")
}

type server struct {
	name  string
	start func(testing.TB, zkserver.Options) *zkserver.Server
	// key: give the JAAS file with zkafka's zoo.cfg key, not SERVER_JVMFLAGS.
	key bool
}

var servers = []server{
	{"apache", zkserver.StartApache, false},
	{"zkafka", zkserver.StartZkafka, false},
	{"zkafka-cfg-key", zkserver.StartZkafka, true},
}

// startSASL starts sv with the JAAS file and zoo.cfg lines extra.
func startSASL(t *testing.T, sv server, jaas string, extra ...string) *zkserver.Server {
	opts := zkserver.Options{ExtraConfig: append([]string{saslProvider, "superUser=admin"}, extra...),
		FourLetterWords: []string{"srvr", "ruok"}}
	if sv.key {
		opts.ExtraConfig = append(opts.ExtraConfig, "zkafka.jaasConfigFile="+jaas)
	} else {
		opts.JVMFlags = []string{"-Djava.security.auth.login.config=" + jaas}
	}
	return sv.start(t, opts)
}

func runKazoo(t *testing.T, addr string) []string {
	t.Helper()
	cmd := exec.Command("timeout", "-k", "5", "150", "/usr/bin/python3", "kazoo_sasl.py", addr)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Logf("kazoo stderr:\n%s", ee.Stderr)
		}
		t.Fatalf("kazoo_sasl.py: %v\n%s", err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestKazooSASL: kazoo's DIGEST-MD5 sessions, sasl ACLs, the super user,
// a reconnect, a wrong password and an unknown user get the same answers
// from Apache ZooKeeper and zkafka.
func TestKazooSASL(t *testing.T) {
	jaas := writeFile(t, "server.jaas", serverJAAS)
	got := map[string][]string{}
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			s := startSASL(t, sv, jaas)
			got[sv.name] = runKazoo(t, s.Addr())
		})
	}
	apache := got["apache"]
	t.Logf("Apache ZooKeeper's transcript:\n%s", strings.Join(apache, "\n"))
	for _, want := range []string{"alice get /k: ok b'kdata'", "bob get /k: NoAuthError", "anonymous get /k: NoAuthError",
		"admin (superUser) get /k: ok b'kdata'", "alice getacl /auth: ok [(31, 'sasl', 'alice')]", "bob get /open: ok b'o'"} {
		if !slices.Contains(apache, want) {
			t.Errorf("Apache ZooKeeper's transcript lacks %q:\n%s", want, strings.Join(apache, "\n"))
		}
	}
	for _, name := range []string{"zkafka", "zkafka-cfg-key"} {
		if !slices.Equal(got[name], apache) {
			t.Errorf("%s answered kazoo differently:\n%s\nApache ZooKeeper:\n%s", name, strings.Join(got[name], "\n"), strings.Join(apache, "\n"))
		}
	}
}

// TestZkCliSASL: zkCli.sh logged in through a JAAS Client section sets a
// sasl ACL; another user and a client without SASL are refused.
func TestZkCliSASL(t *testing.T) {
	jaas := writeFile(t, "server.jaas", serverJAAS)
	alice := "-Djava.security.auth.login.config=" + clientJAAS(t, "alice", "alice-secret")
	bob := "-Djava.security.auth.login.config=" + clientJAAS(t, "bob", "bob-secret")
	got := map[string][][]string{}
	for _, sv := range servers[:2] {
		t.Run(sv.name, func(t *testing.T) {
			s := startSASL(t, sv, jaas)
			var out [][]string
			out = append(out, zkserver.RunZkCliFlags(t, s.Addr(), alice, []string{
				"whoami", "create /zc zcdata sasl:alice:cdrwa", "getAcl /zc", "get /zc", "create /zo open", "setAcl /zo sasl:bob:r",
			})...)
			out = append(out, zkserver.RunZkCliFlags(t, s.Addr(), bob, []string{"whoami", "get /zc", "get /zo", "set /zo x"})...)
			out = append(out, zkserver.RunZkCli(t, s.Addr(), []string{"get /zc", "getAcl /zc"})...)
			got[sv.name] = out
		})
	}
	apache, ours := got["apache"], got["zkafka"]
	t.Logf("Apache ZooKeeper: %q", apache)
	if len(apache) < 3 || !slices.Contains(apache[3], "zcdata") {
		t.Fatalf("Apache ZooKeeper: alice did not read her node: %q", apache)
	}
	if !slices.EqualFunc(apache, ours, slices.Equal) {
		t.Fatalf("zkCli's transcripts differ:\nzkafka: %q\nApache: %q", ours, apache)
	}
}

// goClientOutcome opens a go-zookeeper session without SASL and reports
// what a read answers.
func goClientOutcome(t *testing.T, addr string) string {
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(quiet{}), zk.WithLogInfo(false),
		zk.WithMaxConnBufferSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _, err = c.Get("/")
	if err == nil {
		return "served"
	}
	return err.Error()
}

// zkCliLs runs `zkCli.sh -server addr ls /` (a one-shot command, which
// ends even when the server closes the session) and returns the lines
// that answer it.
func zkCliLs(t *testing.T, addr, jvmFlags string) string {
	cmd := exec.Command("timeout", "-k", "5", "60", zkserver.ZkCli, "-server", addr, "ls", "/")
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS=-Xmx256m "+jvmFlags)
	out, _ := cmd.CombinedOutput()
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "[") || strings.Contains(l, "KeeperErrorCode") || strings.HasPrefix(l, "Exception") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	return strings.Join(keep, "|")
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// TestEnforceSASL: enforce.auth.enabled with the scheme sasl, and
// sessionRequireClientSASLAuth, refuse a client without SASL and serve
// kazoo's DIGEST-MD5 one; requireClientAuthScheme=sasl refuses nobody
// (ZooKeeper 3.8 does not read it).
func TestEnforceSASL(t *testing.T) {
	jaas := writeFile(t, "server.jaas", serverJAAS)
	for _, tc := range []struct {
		name    string
		extra   []string
		refused bool
	}{
		{"enforce.auth", []string{"enforce.auth.enabled=true", "enforce.auth.schemes=sasl"}, true},
		{"sessionRequireClientSASLAuth", []string{"sessionRequireClientSASLAuth=true"}, true},
		{"requireClientAuthScheme", []string{"requireClientAuthScheme=sasl"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string][]string{}
			for _, sv := range servers[:2] {
				s := startSASL(t, sv, jaas, tc.extra...)
				anon := zkCliLs(t, s.Addr(), "")
				sasl := zkCliLs(t, s.Addr(), "-Djava.security.auth.login.config="+clientJAAS(t, "alice", "alice-secret"))
				got[sv.name] = []string{goClientOutcome(t, s.Addr()), anon, sasl}
				s.Stop()
			}
			apache := got["apache"]
			t.Logf("Apache ZooKeeper: %q", apache)
			if (apache[0] != "served") != tc.refused || !strings.Contains(apache[2], "zookeeper") {
				t.Fatalf("Apache ZooKeeper: %q", apache)
			}
			if !slices.Equal(got["zkafka"], apache) {
				t.Fatalf("zkafka %q, Apache ZooKeeper %q", got["zkafka"], apache)
			}
		})
	}
}

// TestDifferentialWithSASLOn runs the differential suite's random
// operations (go-zookeeper sessions without SASL) against Apache ZooKeeper
// and zkafka both configured for SASL with the same JAAS file: turning
// SASL on changes nothing for the clients that do not use it.
func TestDifferentialWithSASLOn(t *testing.T) {
	jaas := writeFile(t, "server.jaas", serverJAAS)
	opts := zkserver.Options{ExtendedTypes: true, ContainerCheckInterval: time.Hour, FourLetterWords: []string{"srvr", "ruok"},
		ExtraConfig: []string{saslProvider, "superUser=admin"}, JVMFlags: []string{"-Djava.security.auth.login.config=" + jaas}}
	a, b := zkserver.StartApache(t, opts), zkserver.StartZkafka(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ops := differential.Generate(20261201, 600)
	ta, tb := differential.RunPair(ctx, "apache", a.Addr(), "zkafka", b.Addr(), ops, differential.Config{}, differential.Config{})
	t.Logf("%d and %d records", len(ta.Records), len(tb.Records))
	if diffs := differential.Compare(ta, tb, 30); len(diffs) > 0 {
		t.Fatalf("zkafka differs from Apache ZooKeeper with SASL on:\n%s", differential.Format(ta, tb, diffs))
	}
	if ta.Err != nil || len(ta.Records) == 0 {
		t.Fatalf("the Apache run: %d records, %v", len(ta.Records), ta.Err)
	}
}
