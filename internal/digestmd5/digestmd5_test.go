package digestmd5

import (
	"errors"
	"strings"
	"testing"
)

func users(m map[string]string) func(string) (string, bool) {
	return func(u string) (string, bool) { p, ok := m[u]; return p, ok }
}

// TestRFC2831Example runs the example of RFC 2831 section 4 (IMAP; user
// chris, password secret) through the server.
func TestRFC2831Example(t *testing.T) {
	s := &Server{Service: "imap", Host: "elwood.innosoft.com", Password: users(map[string]string{"chris": "secret"}),
		Nonce: func() string { return "OA6MG9tEQGm2hh" }}
	ch, err := s.Next(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",charset=utf-8,algorithm=md5-sess`; string(ch) != want {
		t.Fatalf("challenge %s, want %s", ch, want)
	}
	resp := `charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",nc=00000001,cnonce="OA6MHXh6VqTrRk",digest-uri="imap/elwood.innosoft.com",response=d388dad90d4bbd760a152321f2143af7,qop=auth`
	final, err := s.Next([]byte(resp))
	if err != nil {
		t.Fatal(err)
	}
	if string(final) != "rspauth=ea40f60335c427b5527b84dbabcdfffd" || !s.Complete() || s.User() != "chris" {
		t.Fatalf("final %s complete %v user %q", final, s.Complete(), s.User())
	}
}

// TestJavaExchange replays an exchange between Java 17's DIGEST-MD5
// client and server (com.sun.security.sasl.digest) as ZooKeeper sets them
// up: service zookeeper, server name zk-sasl-md5, user alice, password
// secret.
func TestJavaExchange(t *testing.T) {
	const nonce = "pwDW3e5ZOHg+nbOgduJHHKDeAMgMhsVvVz0C2VcI"
	const resp = `charset=utf-8,username="alice",realm="zk-sasl-md5",nonce="pwDW3e5ZOHg+nbOgduJHHKDeAMgMhsVvVz0C2VcI",nc=00000001,cnonce="lnBw26FodnW4GPZzZxQW4kXY3dqA6HmmMLpU358g",digest-uri="zookeeper/zk-sasl-md5",maxbuf=65536,response=36ba0677cb78e645c3f933f268abbfc2,qop=auth`
	s := zkServer(map[string]string{"alice": "secret"})
	s.Nonce = func() string { return nonce }
	if _, err := s.Next([]byte{}); err != nil {
		t.Fatal(err)
	}
	final, err := s.Next([]byte(resp))
	if err != nil {
		t.Fatal(err)
	}
	if string(final) != "rspauth=7f5cfa2340934dd49a9cc581cd045ed1" {
		t.Fatalf("rspauth %s", final)
	}
	// The client computes Java's response from the same nonces.
	c := &Client{User: "alice", Password: "secret", Service: "zookeeper", Host: "zk-sasl-md5",
		CNonce: func() string { return "lnBw26FodnW4GPZzZxQW4kXY3dqA6HmmMLpU358g" }}
	got, err := c.Respond([]byte(`realm="zk-sasl-md5",nonce="` + nonce + `",charset=utf-8,algorithm=md5-sess`))
	if err != nil || string(got) != resp {
		t.Fatalf("client response %s (%v), want Java's %s", got, err, resp)
	}
	if err := c.Verify(final); err != nil || !c.Complete() {
		t.Fatalf("verify: %v", err)
	}
}

func zkServer(u map[string]string) *Server {
	return &Server{Service: "zookeeper", Host: "zk-sasl-md5", Password: users(u)}
}

func TestClientServer(t *testing.T) {
	for _, tc := range []struct{ user, password string }{
		{"alice", "secret"}, {"zoë", "pässwörd"}, {"名前", "パスワード"}, {`q"uote\`, `p"w\`},
	} {
		s := zkServer(map[string]string{tc.user: tc.password})
		c := &Client{User: tc.user, Password: tc.password, Service: "zookeeper", Host: "zk-sasl-md5"}
		ch, err := s.Next(nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Respond(ch)
		if err != nil {
			t.Fatal(err)
		}
		final, err := s.Next(resp)
		if err != nil {
			t.Fatalf("%s: %v", tc.user, err)
		}
		if err := c.Verify(final); err != nil || s.User() != tc.user {
			t.Fatalf("%s: verify %v, user %q", tc.user, err, s.User())
		}
		if _, err := s.Next(nil); err == nil || !strings.Contains(err.Error(), "illegal state") {
			t.Fatalf("a token after completion: %v", err)
		}
	}
}

// TestRefused: every bad response is an *Error naming the user (when
// known) and never the password; the exchange is then over.
func TestRefused(t *testing.T) {
	good := func(nonce string) map[string]string {
		return map[string]string{"charset": "utf-8", "username": `"alice"`, "realm": `"zk-sasl-md5"`, "nonce": `"` + nonce + `"`,
			"nc": "00000001", "cnonce": `"abc"`, "digest-uri": `"zookeeper/zk-sasl-md5"`, "qop": "auth"}
	}
	for _, tc := range []struct {
		name   string
		edit   func(d map[string]string)
		reason string
	}{
		{"wrong password", nil, "wrong password"},
		{"unknown user", func(d map[string]string) { d["username"] = `"mallory"` }, "unknown user"},
		{"other realm", func(d map[string]string) { d["realm"] = `"x"` }, "unknown realm"},
		{"other nonce", func(d map[string]string) { d["nonce"] = `"x"` }, "nonce does not match"},
		{"replayed count", func(d map[string]string) { d["nc"] = "00000002" }, "nonce count"},
		{"integrity", func(d map[string]string) { d["qop"] = "auth-int" }, "was not offered"},
		{"other uri", func(d map[string]string) { d["digest-uri"] = `"ldap/zk-sasl-md5"` }, "digest-uri"},
		{"no uri", func(d map[string]string) { delete(d, "digest-uri") }, "digest-uri"},
		{"no cnonce", func(d map[string]string) { delete(d, "cnonce") }, "cnonce"},
		{"latin1", func(d map[string]string) { d["charset"] = "iso-8859-1" }, "charset"},
		{"no user", func(d map[string]string) { delete(d, "username") }, "without username"},
	} {
		s := zkServer(map[string]string{"alice": "secret"})
		s.Nonce = func() string { return "N" }
		if _, err := s.Next(nil); err != nil {
			t.Fatal(err)
		}
		d := good("N")
		if tc.edit != nil {
			tc.edit(d)
		}
		var parts []string
		for k, v := range d {
			parts = append(parts, k+"="+v)
		}
		parts = append(parts, "response=0123456789abcdef0123456789abcdef")
		_, err := s.Next([]byte(strings.Join(parts, ",")))
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Reason, tc.reason) {
			t.Errorf("%s: %v, want a reason with %q", tc.name, err, tc.reason)
			continue
		}
		if strings.Contains(err.Error(), "secret") || s.Complete() {
			t.Errorf("%s: %v (complete %v)", tc.name, err, s.Complete())
		}
		if _, err := s.Next(nil); err == nil {
			t.Errorf("%s: the exchange went on after a failure", tc.name)
		}
	}
}

func TestRefusedFraming(t *testing.T) {
	s := zkServer(nil)
	if ch, err := s.Next([]byte("x")); err != nil || !strings.HasPrefix(string(ch), `realm="zk-sasl-md5",nonce="`) {
		t.Fatalf("an initial response: %s %v, want the challenge (Java ignores it)", ch, err)
	}
	for _, bad := range []string{strings.Repeat("a", maxToken+1), `username="open`, `username`, `a=1 b=2`, `username="a",username="b"`} {
		s := zkServer(nil)
		s.Next(nil)
		if _, err := s.Next([]byte(bad)); err == nil {
			t.Errorf("%.30q was taken", bad)
		}
	}
}

func TestParseDirectives(t *testing.T) {
	d, err := parseDirectives([]byte(` , realm="a\"b" ,, nonce = x ,realm="c", qop="auth,auth-int"`), map[string]bool{"realm": true})
	if err != nil {
		t.Fatal(err)
	}
	if d["realm"] != `a"b` || d["nonce"] != "x" || d["qop"] != "auth,auth-int" {
		t.Fatalf("%q", d)
	}
}

func FuzzServer(f *testing.F) {
	f.Add([]byte(`charset=utf-8,username="alice",realm="zk-sasl-md5",nonce="N",nc=00000001,cnonce="c",digest-uri="zookeeper/zk-sasl-md5",response=36ba0677cb78e645c3f933f268abbfc2,qop=auth`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := zkServer(map[string]string{"alice": "secret"})
		s.Nonce = func() string { return "N" }
		s.Next(nil)
		if _, err := s.Next(b); err == nil && !s.Complete() {
			t.Fatal("no error and not complete")
		}
	})
}
