package quorum

import (
	"bufio"
	"bytes"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/digestmd5"
	"github.com/zkafka/zkafka/zkproto"
)

// lockedBuffer collects a server's log lines for the tests to read.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var saslUsers = map[string]string{"alice": "alice-secret", "bob": "bob-secret", "admin": "admin-secret"}

// startSASLServer starts a standalone server with the JAAS users above and
// the sasl provider; its log goes to the returned buffer.
func startSASLServer(t *testing.T, edit ...func(*Config)) (*Server, *lockedBuffer) {
	t.Helper()
	cfg := DefaultConfig(t.TempDir())
	cfg.TickTime = 100 * time.Millisecond
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 0, 0
	cfg.SASL = SASLConfig{Users: saslUsers, Provider: true}
	for _, e := range edit {
		e(&cfg)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	s, err := StartWithListener(cfg, slog.New(slog.NewTextHandler(logs, nil)), l)
	if err != nil {
		t.Fatal(err)
	}
	s.saslFailureDelay = 300 * time.Millisecond
	t.Cleanup(func() { s.Close() })
	return s, logs
}

// rawClient is a ZooKeeper client over TCP that sends one request at a
// time and reads its reply: enough for the SASL exchange, which the Go
// ZooKeeper client does not have.
type rawClient struct {
	t       *testing.T
	nc      net.Conn
	br      *bufio.Reader
	xid     int32
	session zkproto.ConnectResponse
}

func dialRaw(t *testing.T, s *Server, resume *zkproto.ConnectResponse) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
	req := zkproto.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}
	if resume != nil {
		req.SessionID, req.Passwd = resume.SessionID, resume.Passwd
	}
	nc.SetDeadline(time.Now().Add(waitLimit))
	if _, err := nc.Write(zkproto.AppendFrame(nil, &req)); err != nil {
		t.Fatal(err)
	}
	frame, err := zkproto.ReadFrame(c.br, nil, zkproto.MaxBuffer)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	c.session.Decode(zkproto.NewReader(frame))
	return c
}

// call sends one request and returns its reply's header and body; err is
// set when the connection ended without a reply.
func (c *rawClient) call(op zkproto.OpCode, rec zkproto.Record) (zkproto.ReplyHeader, []byte, error) {
	c.xid++
	c.nc.SetDeadline(time.Now().Add(waitLimit))
	if _, err := c.nc.Write(zkproto.AppendRequest(nil, zkproto.RequestHeader{Xid: c.xid, Type: op}, rec)); err != nil {
		return zkproto.ReplyHeader{}, nil, err
	}
	frame, err := zkproto.ReadFrame(c.br, nil, zkproto.MaxBuffer)
	if err != nil {
		return zkproto.ReplyHeader{}, nil, err
	}
	r := zkproto.NewReader(frame)
	var h zkproto.ReplyHeader
	h.Decode(r)
	return h, r.Src, r.Err()
}

// closed reports whether the server closed the connection.
func (c *rawClient) closed() bool {
	c.nc.SetReadDeadline(time.Now().Add(waitLimit))
	_, err := c.br.ReadByte()
	return err != nil
}

// saslToken sends one sasl token and returns the server's.
func (c *rawClient) saslToken(tok []byte) (zkproto.ReplyHeader, []byte, []byte) {
	c.t.Helper()
	h, body, err := c.call(zkproto.OpSASL, &zkproto.GetSASLRequest{Token: tok})
	if err != nil {
		c.t.Fatalf("sasl: %v", err)
	}
	var resp zkproto.SetSASLResponse
	r := zkproto.NewReader(body)
	resp.Decode(r)
	if err := r.Complete(); err != nil {
		c.t.Fatalf("sasl reply body %x: %v", body, err)
	}
	return h, resp.Token, body
}

// authenticate runs the DIGEST-MD5 exchange as the Java client does
// (an empty token, the response, then the server's rspauth) and returns
// the last reply's header and body.
func (c *rawClient) authenticate(user, password string) (zkproto.ReplyHeader, []byte) {
	c.t.Helper()
	h, challenge, body := c.saslToken([]byte{})
	if h.Err != zkproto.ErrOK {
		return h, body
	}
	dc := &digestmd5.Client{User: user, Password: password, Service: "zookeeper", Host: "zk-sasl-md5"}
	resp, err := dc.Respond(challenge)
	if err != nil {
		c.t.Fatal(err)
	}
	h, final, body := c.saslToken(resp)
	if h.Err == zkproto.ErrOK {
		if err := dc.Verify(final); err != nil {
			c.t.Fatalf("server's rspauth: %v", err)
		}
	}
	return h, body
}

func (c *rawClient) mustAuthenticate(user, password string) {
	c.t.Helper()
	if h, _ := c.authenticate(user, password); h.Err != zkproto.ErrOK || h.Zxid != 0 {
		c.t.Fatalf("%s: sasl reply %+v", user, h)
	}
}

func (c *rawClient) create(path string, acl []zkproto.ACL) zkproto.Err {
	c.t.Helper()
	h, _, err := c.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: path, Data: []byte("d"), ACL: acl})
	if err != nil {
		c.t.Fatal(err)
	}
	return h.Err
}

func (c *rawClient) get(path string) zkproto.Err {
	c.t.Helper()
	h, _, err := c.call(zkproto.OpGetData, &zkproto.GetDataRequest{Path: path})
	if err != nil {
		c.t.Fatal(err)
	}
	return h.Err
}

func saslACL(user string) []zkproto.ACL {
	return []zkproto.ACL{{Perms: zkproto.PermAll, ID: zkproto.ID{Scheme: "sasl", ID: user}}}
}

// TestSASLIdentityAndACL: a DIGEST-MD5 exchange gives the connection the
// identity sasl:USER, which sasl ACLs (and "auth" ACLs) admit, and nobody
// else: another sasl user, a client without SASL.
func TestSASLIdentityAndACL(t *testing.T) {
	s, logs := startSASLServer(t)
	alice := dialRaw(t, s, nil)
	alice.mustAuthenticate("alice", "alice-secret")
	if err := alice.create("/alice", saslACL("alice")); err != zkproto.ErrOK {
		t.Fatalf("create: %v", err)
	}
	if err := alice.create("/mine", zkproto.CreatorAllACL); err != zkproto.ErrOK {
		t.Fatalf("create with the auth ACL: %v", err)
	}
	if err := alice.get("/alice"); err != zkproto.ErrOK {
		t.Fatalf("alice reads her node: %v", err)
	}
	bob := dialRaw(t, s, nil)
	bob.mustAuthenticate("bob", "bob-secret")
	if err := bob.get("/alice"); err != zkproto.ErrNoAuth {
		t.Fatalf("bob reads alice's node: %v", err)
	}
	plain := connectZK(t, s)
	if _, _, err := plain.Get("/alice"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("a client without SASL reads alice's node: %v", err)
	}
	h, body, err := alice.call(zkproto.OpGetACL, &zkproto.GetACLRequest{Path: "/mine"})
	var acl zkproto.GetACLResponse
	acl.Decode(zkproto.NewReader(body))
	if err != nil || h.Err != zkproto.ErrOK || len(acl.ACL) != 1 || acl.ACL[0] != saslACL("alice")[0] {
		t.Fatalf("the auth ACL became %v (%v %v)", acl.ACL, h.Err, err)
	}
	h, body, err = alice.call(zkproto.OpWhoAmI, &zkproto.Empty{})
	if err != nil || h.Err != zkproto.ErrOK {
		t.Fatal(h, err)
	}
	var who zkproto.WhoAmIResponse
	who.Decode(zkproto.NewReader(body))
	if !containsInfo(who.ClientInfo, zkproto.ClientInfo{AuthScheme: "sasl", User: "alice"}) {
		t.Fatalf("whoAmI: %+v", who.ClientInfo)
	}
	if !strings.Contains(logs.String(), "SASL authenticated") || strings.Contains(logs.String(), "alice-secret") {
		t.Fatalf("log:\n%s", logs)
	}
}

func containsInfo(l []zkproto.ClientInfo, want zkproto.ClientInfo) bool {
	for _, c := range l {
		if c == want {
			return true
		}
	}
	return false
}

// TestSASLWrongPassword: AuthFailed with a null token and zxid 0, as
// ZooKeeper answers, after the failure delay; then the connection closes.
// The log names the user and the remote address, not the password.
// Other clients go on meanwhile.
func TestSASLWrongPassword(t *testing.T) {
	// The other client's session must outlive a loaded machine's pauses:
	// tickTime 100 ms caps sessions at 2 s otherwise, and go-zookeeper
	// drops a connection silent for 2/3 of that.
	s, logs := startSASLServer(t, func(c *Config) { c.MaxSessionTimeout = 10 * time.Second })
	other := connectZK(t, s)
	for _, tc := range []struct{ user, password string }{{"alice", "guess-1"}, {"mallory", "guess-2"}} {
		c := dialRaw(t, s, nil)
		start := time.Now()
		h, body := c.authenticate(tc.user, tc.password)
		if h.Err != zkproto.ErrAuthFailed || h.Zxid != 0 || !bytes.Equal(body, []byte{0xff, 0xff, 0xff, 0xff}) {
			t.Fatalf("%s: reply %+v body %x, want AuthFailed, zxid 0, a null token", tc.user, h, body)
		}
		if d := time.Since(start); d < s.saslFailureDelay {
			t.Fatalf("%s: answered after %v, before the failure delay", tc.user, d)
		}
		if !c.closed() {
			t.Fatalf("%s: the connection stayed open", tc.user)
		}
		if _, err := other.Create("/other-"+tc.user, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("another client: %v", err)
		}
		line := lineWith(logs.String(), "SASL authentication failed", "user="+tc.user)
		if line == "" || !strings.Contains(line, "remote=127.0.0.1:") || strings.Contains(logs.String(), tc.password) {
			t.Fatalf("log:\n%s", logs)
		}
	}
}

func lineWith(text string, parts ...string) string {
	for _, l := range strings.Split(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return l
		}
	}
	return ""
}

// TestSASLWithoutUsers: a server without JAAS users answers sasl OK with
// a null token (ZooKeeper's connection has no SASL server then).
func TestSASLWithoutUsers(t *testing.T) {
	s, _ := startSASLServer(t, func(c *Config) { c.SASL = SASLConfig{} })
	c := dialRaw(t, s, nil)
	h, tok, body := c.saslToken([]byte{})
	if h.Err != zkproto.ErrOK || tok != nil || !bytes.Equal(body, []byte{0xff, 0xff, 0xff, 0xff}) {
		t.Fatalf("reply %+v body %x", h, body)
	}
	if err := c.get("/"); err != zkproto.ErrOK {
		t.Fatalf("the connection went on badly: %v", err)
	}
}

// TestSASLSuperUser: zookeeper.superUser's sessions pass every ACL.
func TestSASLSuperUser(t *testing.T) {
	s, _ := startSASLServer(t, func(c *Config) { c.SASL.SuperUser = "admin" })
	alice := dialRaw(t, s, nil)
	alice.mustAuthenticate("alice", "alice-secret")
	if err := alice.create("/alice", saslACL("alice")); err != zkproto.ErrOK {
		t.Fatal(err)
	}
	admin := dialRaw(t, s, nil)
	admin.mustAuthenticate("admin", "admin-secret")
	if err := admin.get("/alice"); err != zkproto.ErrOK {
		t.Fatalf("the super user reads alice's node: %v", err)
	}
}

// TestEnforceAuth: with enforce.auth on for sasl, any request (a ping
// too) of a connection that has not authenticated is answered
// SessionClosedRequireSASL with no body, and the connection closes; an
// authenticated one is served, and a failed exchange answers
// SessionClosedRequireSASL too.
func TestEnforceAuth(t *testing.T) {
	s, _ := startSASLServer(t, func(c *Config) { c.SASL.EnforceAuth, c.SASL.EnforceSchemes = true, []string{"sasl"} })
	for _, op := range []zkproto.OpCode{zkproto.OpGetData, zkproto.OpPing, zkproto.OpCreate} {
		c := dialRaw(t, s, nil)
		var rec zkproto.Record = &zkproto.GetDataRequest{Path: "/"}
		switch op {
		case zkproto.OpPing:
			rec = nil
		case zkproto.OpCreate:
			rec = &zkproto.CreateRequest{Path: "/x", ACL: zkproto.OpenACLUnsafe}
		}
		h, body, err := c.call(op, rec)
		if err != nil || h.Err != zkproto.ErrSessionClosedRequireSASL || h.Zxid != 0 || len(body) != 0 {
			t.Fatalf("op %d: reply %+v body %x (%v)", op, h, body, err)
		}
		if !c.closed() {
			t.Fatalf("op %d: the connection stayed open", op)
		}
	}
	c := dialRaw(t, s, nil)
	c.mustAuthenticate("alice", "alice-secret")
	if err := c.create("/x", zkproto.OpenACLUnsafe); err != zkproto.ErrOK {
		t.Fatalf("an authenticated client: %v", err)
	}
	bad := dialRaw(t, s, nil)
	if h, _ := bad.authenticate("alice", "wrong"); h.Err != zkproto.ErrSessionClosedRequireSASL {
		t.Fatalf("a failed exchange under enforcement: %+v", h)
	}
}

// TestEnforceAuthDigest: enforce.auth.schemes=digest admits a client that
// sent addAuth digest first.
func TestEnforceAuthDigest(t *testing.T) {
	s, _ := startSASLServer(t, func(c *Config) { c.SASL.EnforceAuth, c.SASL.EnforceSchemes = true, []string{"digest"} })
	c := dialRaw(t, s, nil)
	if h, _, err := c.call(zkproto.OpAuth, &zkproto.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}); err != nil || h.Err != zkproto.ErrOK {
		t.Fatalf("auth: %+v %v", h, err)
	}
	if err := c.get("/"); err != zkproto.ErrOK {
		t.Fatalf("a digest client: %v", err)
	}
	sasl := dialRaw(t, s, nil)
	sasl.mustAuthenticate("alice", "alice-secret")
	if h, _, _ := sasl.call(zkproto.OpGetData, &zkproto.GetDataRequest{Path: "/"}); h.Err != zkproto.ErrSessionClosedRequireSASL {
		t.Fatalf("a sasl client when digest is enforced: %+v", h)
	}
}

// TestSASLSessionResumes: identities belong to a connection; a client
// that reconnects to its session authenticates again and finds its
// session (and its ephemeral node) as it left them.
func TestSASLSessionResumes(t *testing.T) {
	s, _ := startSASLServer(t, func(c *Config) { c.SASL.EnforceAuth, c.SASL.EnforceSchemes = true, []string{"sasl"} })
	first := dialRaw(t, s, nil)
	first.mustAuthenticate("alice", "alice-secret")
	h, _, err := first.call(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/eph", ACL: saslACL("alice"), Flags: zkproto.ModeEphemeral})
	if err != nil || h.Err != zkproto.ErrOK {
		t.Fatalf("create: %+v %v", h, err)
	}
	first.nc.Close()
	second := dialRaw(t, s, &first.session)
	if second.session.SessionID != first.session.SessionID {
		t.Fatalf("session 0x%x, want 0x%x", second.session.SessionID, first.session.SessionID)
	}
	second.mustAuthenticate("alice", "alice-secret")
	if err := second.get("/eph"); err != zkproto.ErrOK {
		t.Fatalf("the session's ephemeral after the reconnect: %v", err)
	}
}
