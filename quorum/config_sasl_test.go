package quorum

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const saslProvider = "authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n"

func TestParseSASLKeys(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		bad  string // a piece of the error; "" good
		good func(SASLConfig) bool
	}{
		{saslProvider, "", func(s SASLConfig) bool { return s.Provider && !s.EnforceAuth }},
		{"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider", "", func(s SASLConfig) bool { return s.X509Provider && !s.Provider }},
		{saslProvider + "enforce.auth.enabled=true\nenforce.auth.schemes=sasl", "", func(s SASLConfig) bool {
			return s.EnforceAuth && slices.Equal(s.EnforceSchemes, []string{"sasl"}) && s.saslRequired()
		}},
		{saslProvider + "zookeeper.enforce.auth.enabled=true\nzookeeper.enforce.auth.schemes= digest , sasl", "", func(s SASLConfig) bool {
			return s.EnforceAuth && slices.Equal(s.EnforceSchemes, []string{"digest", "sasl"})
		}},
		{saslProvider + "sessionRequireClientSASLAuth=true", "", func(s SASLConfig) bool { return s.EnforceAuth && s.saslRequired() }},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=digest", "", func(s SASLConfig) bool { return s.EnforceAuth && !s.saslRequired() }},
		{"superUser=admin\nzookeeper.sasl.serverconfig=ZkServer\nallowSaslFailedClients=true", "", func(s SASLConfig) bool {
			return s.SuperUser == "admin" && s.Section == "ZkServer" && s.AllowFailedClients
		}},
		{JAASConfigKey + "=/etc/zk/jaas.conf", "", func(s SASLConfig) bool { return s.JAASFile == "/etc/zk/jaas.conf" }},
		{"requireClientAuthScheme=sasl", "", func(s SASLConfig) bool { return !s.EnforceAuth }},
		{"enforce.auth.enabled=true", "enforce.auth.enabled=true: needs enforce.auth.schemes", nil},
		{"enforce.auth.enabled=true\nenforce.auth.schemes=sasl", `names "sasl", which is no authentication provider`, nil},
		{"sessionRequireClientSASLAuth=true", "sessionRequireClientSASLAuth", nil},
		{"enforce.auth.enabled=yes", "enforce.auth.enabled", nil},
	} {
		c, _, err := parseZooCfg(t, tc.cfg)
		switch {
		case tc.bad != "":
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%q: %v, want an error with %q", tc.cfg, err, tc.bad)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.cfg, err)
		case !tc.good(c.SASL):
			t.Errorf("%q: %+v", tc.cfg, c.SASL)
		}
	}
}

func TestRequireClientAuthSchemeWarns(t *testing.T) {
	_, logs, err := parseZooCfg(t, "requireClientAuthScheme=sasl\n")
	if err != nil || !strings.Contains(logs, "requireClientAuthScheme has no effect") {
		t.Fatalf("%v\n%s", err, logs)
	}
}

func TestQuorumSASLWarns(t *testing.T) {
	_, logs, err := parseZooCfg(t, "quorum.auth.enableSasl=true\nquorum.auth.learnerRequireSasl=false\n")
	if err != nil || strings.Count(logs, "quorum SASL is not done") != 1 {
		t.Fatalf("%v\n%s", err, logs)
	}
	if _, _, err := parseZooCfg(t, "quorum.auth.serverRequireSasl=maybe\n"); err == nil {
		t.Fatal("a bad boolean was taken")
	}
}

func writeJAAS(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jaas.conf")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const serverJAAS = `Server {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  user_alice="alice-secret" user_super="s";
};
`

// TestLoadJAAS: the file comes from zoo.cfg's key, else from
// -Djava.security.auth.login.config in SERVER_JVMFLAGS or JVMFLAGS (the
// later wins); -Dzookeeper.superUser and -Dzookeeper.sasl.serverconfig
// there count too.
func TestLoadJAAS(t *testing.T) {
	file := writeJAAS(t, serverJAAS)
	other := writeJAAS(t, "Other { m.M required user_bob=\"b\"; };")
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	var s SASLConfig
	if err := s.loadJAAS(env(map[string]string{"SERVER_JVMFLAGS": "-Xmx1g -Djava.security.auth.login.config=" + file + " -Dzookeeper.superUser=alice"}), nil); err != nil {
		t.Fatal(err)
	}
	if s.Users["alice"] != "alice-secret" || s.SuperUser != "alice" || s.JAASFile != file {
		t.Fatalf("from SERVER_JVMFLAGS: %+v", s)
	}

	s = SASLConfig{}
	err := s.loadJAAS(env(map[string]string{"SERVER_JVMFLAGS": "-Djava.security.auth.login.config=" + file,
		"JVMFLAGS": "-Djava.security.auth.login.config=" + other + " -Dzookeeper.sasl.serverconfig=Other"}), nil)
	if err != nil || s.Users["bob"] != "b" || s.Section != "Other" {
		t.Fatalf("JVMFLAGS comes last and wins: %+v %v", s, err)
	}

	s = SASLConfig{JAASFile: file}
	if err := s.loadJAAS(env(map[string]string{"JVMFLAGS": "-Djava.security.auth.login.config=" + other}), nil); err != nil || s.Users["alice"] == "" {
		t.Fatalf("zoo.cfg's key wins: %+v %v", s, err)
	}

	s = SASLConfig{JAASFile: other}
	if err := s.loadJAAS(env(nil), nil); err != nil || s.Users != nil {
		t.Fatalf("no Server section: no SASL: %+v %v", s, err)
	}

	for _, bad := range []string{filepath.Join(t.TempDir(), "missing.conf"), writeJAAS(t, "Server { m.M required")} {
		s = SASLConfig{JAASFile: bad}
		if err := s.loadJAAS(env(nil), nil); err == nil || !strings.Contains(err.Error(), bad) {
			t.Fatalf("%s: %v", bad, err)
		}
	}
}

// TestLoadConfigJAAS: LoadConfig reads the JAAS file of zoo.cfg.
func TestLoadConfigJAAS(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "zoo.cfg")
	text := "dataDir=" + dir + "\n" + saslProvider + JAASConfigKey + "=" + writeJAAS(t, serverJAAS) + "\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(cfg, nil)
	if err != nil || c.SASL.Users["alice"] != "alice-secret" {
		t.Fatalf("%+v %v", c.SASL, err)
	}
}
