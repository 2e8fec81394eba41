package broker

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
	"github.com/zkafka/zkafka/kproto"
)

// saslTestBroker is a test broker (no ZooKeeper) with one SASL listener,
// SASL_PLAINTEXT, offering PLAIN to alice and bob, and a clock the test
// moves.
func saslTestBroker(t *testing.T) (*Broker, *fakeClock) {
	b, _ := newTestBroker(t)
	b.budget = newRequestBudget(DefaultQueuedMaxRequestBytes, 0)
	b.cfg.SASL = DefaultSASLConfig()
	b.cfg.SASL.FailedAuthDelay = 0
	b.sasl = map[string]*saslListener{"SASL_PLAINTEXT": {name: "SASL_PLAINTEXT", mechanisms: []string{"PLAIN"},
		plainUsers: map[string]string{"alice": "alice-pw", "bob": "bob-pw"}, reauth: map[string]time.Duration{"PLAIN": time.Minute},
		deadline: saslHandshakeTimeout}}
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	b.now = clk.now
	t.Cleanup(func() { close(b.done) })
	return b, clk
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// serveListener serves one loopback connection of b as listener's.
func serveListener(t *testing.T, b *Broker, listener string) (net.Conn, *conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(b, server)
	c.listener = listener
	b.trackConn(c, true)
	if !b.goTracked("kafka-conn", c.serve) {
		t.Fatal("not serving")
	}
	return client, c
}

// call sends req at version (header v1: non-flexible versions only) and
// decodes its response.
func call(t *testing.T, nc net.Conn, req kmsg.Request, version int16) kmsg.Response {
	t.Helper()
	req.SetVersion(version)
	frame := roundTrip(t, nc, req.Key(), version, req.AppendTo(nil))
	resp := req.ResponseKind()
	resp.SetVersion(version)
	if err := resp.ReadFrom(frame[4:]); err != nil {
		t.Fatalf("decoding %T: %v", resp, err)
	}
	return resp
}

// send writes req without waiting for an answer.
func send(t *testing.T, nc net.Conn, req kmsg.Request, version int16) {
	t.Helper()
	req.SetVersion(version)
	hdr := kproto.RequestHeader{APIKey: req.Key(), APIVersion: version, CorrelationID: 7, HeaderVersion: 1}
	buf := kproto.AppendRequestHeader(make([]byte, 4), &hdr)
	buf = req.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	if _, err := nc.Write(buf); err != nil {
		t.Fatal(err)
	}
}

// expectClosed checks that the broker closes nc (within 10 s) without
// sending anything more.
func expectClosed(t *testing.T, nc net.Conn) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := nc.Read(make([]byte, 1))
	if errors.Is(err, os.ErrDeadlineExceeded) || n > 0 {
		t.Fatalf("the connection is still open (read %d bytes, %v)", n, err)
	}
}

func handshake(t *testing.T, nc net.Conn, mech string, version int16) *kmsg.SASLHandshakeResponse {
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Mechanism = mech
	return call(t, nc, req, version).(*kmsg.SASLHandshakeResponse)
}

func authenticate(t *testing.T, nc net.Conn, token string) *kmsg.SASLAuthenticateResponse {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SASLAuthBytes = []byte(token)
	return call(t, nc, req, 1).(*kmsg.SASLAuthenticateResponse)
}

// login authenticates nc with PLAIN (SaslHandshake v1, SaslAuthenticate v1).
func login(t *testing.T, nc net.Conn, user, pass string) *kmsg.SASLAuthenticateResponse {
	t.Helper()
	if hs := handshake(t, nc, "PLAIN", 1); hs.ErrorCode != 0 {
		t.Fatalf("handshake: %v", kerr.ErrorForCode(hs.ErrorCode))
	}
	return authenticate(t, nc, "\x00"+user+"\x00"+pass)
}

func apiVersionsOK(t *testing.T, nc net.Conn) {
	t.Helper()
	if r := call(t, nc, kmsg.NewPtrApiVersionsRequest(), 1).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 || len(r.ApiKeys) == 0 {
		t.Fatalf("ApiVersions: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// TestSASLPlainLogin: ApiVersions, SaslHandshake v1 (the enabled
// mechanisms), SaslAuthenticate v1 (the session lifetime); the
// connection's principal is then User:alice, and a later SaslAuthenticate
// is ILLEGAL_SASL_STATE as in KafkaApis.
func TestSASLPlainLogin(t *testing.T) {
	b, _ := saslTestBroker(t)
	nc, c := serveListener(t, b, "SASL_PLAINTEXT")
	apiVersionsOK(t, nc)
	hs := handshake(t, nc, "PLAIN", 1)
	if hs.ErrorCode != 0 || strings.Join(hs.SupportedMechanisms, ",") != "PLAIN" {
		t.Fatalf("handshake: %v %v", kerr.ErrorForCode(hs.ErrorCode), hs.SupportedMechanisms)
	}
	r := authenticate(t, nc, "\x00alice\x00alice-pw")
	if r.ErrorCode != 0 || r.SessionLifetimeMillis != 60000 {
		t.Fatalf("authenticate: %v, lifetime %d", kerr.ErrorForCode(r.ErrorCode), r.SessionLifetimeMillis)
	}
	apiVersionsOK(t, nc)
	if p := c.principal(); p != "User:alice" {
		t.Fatalf("principal %q", p)
	}
	if r := authenticate(t, nc, "\x00alice\x00alice-pw"); r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslAuthenticate after authentication: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// TestSASLHandshakeV0RawTokens: after SaslHandshake v0 the token is a
// raw frame, answered by a raw (empty, for PLAIN) frame; then requests
// are served.
func TestSASLHandshakeV0RawTokens(t *testing.T) {
	b, _ := saslTestBroker(t)
	nc, c := serveListener(t, b, "SASL_PLAINTEXT")
	if hs := handshake(t, nc, "PLAIN", 0); hs.ErrorCode != 0 {
		t.Fatalf("handshake v0: %v", kerr.ErrorForCode(hs.ErrorCode))
	}
	token := "\x00bob\x00bob-pw"
	nc.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(token))), token...))
	var size [4]byte
	if _, err := io.ReadFull(nc, size[:]); err != nil || binary.BigEndian.Uint32(size[:]) != 0 {
		t.Fatalf("raw answer: %v %v", size, err)
	}
	apiVersionsOK(t, nc)
	if c.principal() != "User:bob" {
		t.Fatalf("principal %q", c.principal())
	}
}

// TestSASLBadInput: each bad start gets Kafka's answer, or none, and the
// connection closes; other connections are served meanwhile.
func TestSASLBadInput(t *testing.T) {
	b, _ := saslTestBroker(t)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, nc net.Conn)
	}{
		{"wrong password", func(t *testing.T, nc net.Conn) {
			r := login(t, nc, "alice", "bob-pw")
			if r.ErrorCode != kerr.SaslAuthenticationFailed.Code || *r.ErrorMessage != "Authentication failed: Invalid username or password" {
				t.Fatalf("%v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
			}
		}},
		{"unknown user", func(t *testing.T, nc net.Conn) {
			if r := login(t, nc, "mallory", "x"); r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
				t.Fatalf("%v", kerr.ErrorForCode(r.ErrorCode))
			}
		}},
		{"unknown mechanism", func(t *testing.T, nc net.Conn) {
			hs := handshake(t, nc, "GSSAPI", 1)
			if hs.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(hs.SupportedMechanisms, ",") != "PLAIN" {
				t.Fatalf("%v %v", kerr.ErrorForCode(hs.ErrorCode), hs.SupportedMechanisms)
			}
		}},
		{"SaslAuthenticate before the handshake", func(t *testing.T, nc net.Conn) {
			if r := authenticate(t, nc, "\x00alice\x00alice-pw"); r.ErrorCode != kerr.IllegalSaslState.Code {
				t.Fatalf("%v", kerr.ErrorForCode(r.ErrorCode))
			}
		}},
		{"Metadata before authentication", func(t *testing.T, nc net.Conn) {
			send(t, nc, kmsg.NewPtrMetadataRequest(), 4)
		}},
		{"Metadata during the exchange", func(t *testing.T, nc net.Conn) {
			handshake(t, nc, "PLAIN", 1)
			send(t, nc, kmsg.NewPtrMetadataRequest(), 4)
		}},
		{"ApiVersions twice", func(t *testing.T, nc net.Conn) {
			apiVersionsOK(t, nc)
			send(t, nc, kmsg.NewPtrApiVersionsRequest(), 1)
		}},
		{"bad PLAIN token", func(t *testing.T, nc net.Conn) {
			handshake(t, nc, "PLAIN", 1)
			if r := authenticate(t, nc, "no separators"); r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
				t.Fatalf("%v", kerr.ErrorForCode(r.ErrorCode))
			}
		}},
		{"frame over sasl.server.max.receive.size", func(t *testing.T, nc net.Conn) {
			nc.Write(binary.BigEndian.AppendUint32(nil, 524289))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other, _ := serveListener(t, b, "SASL_PLAINTEXT")
			nc, _ := serveListener(t, b, "SASL_PLAINTEXT")
			tc.run(t, nc)
			expectClosed(t, nc)
			login(t, other, "alice", "alice-pw")
			apiVersionsOK(t, other)
		})
	}
}

// TestSASLFailureDelay: a failed authentication is answered after
// connection.failed.authentication.delay.ms.
func TestSASLFailureDelay(t *testing.T) {
	b, _ := saslTestBroker(t)
	b.cfg.SASL.FailedAuthDelay = 200 * time.Millisecond
	nc, _ := serveListener(t, b, "SASL_PLAINTEXT")
	start := time.Now()
	login(t, nc, "alice", "wrong")
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("answered after %v", d)
	}
}

// TestSASLHandshakeDeadline: a client that connects and never
// authenticates is closed after saslHandshakeTimeout, as is one that
// stopped halfway; one that authenticated in time stays. The deadline of
// a connection opened after it has passed once that one is closed, so no
// wall-clock wait is needed to know it.
func TestSASLHandshakeDeadline(t *testing.T) {
	b, _ := saslTestBroker(t)
	b.sasl["SASL_PLAINTEXT"].deadline = 2 * time.Second // room for a login on a loaded machine
	silent, _ := serveListener(t, b, "SASL_PLAINTEXT")
	halfway, _ := serveListener(t, b, "SASL_PLAINTEXT")
	handshake(t, halfway, "PLAIN", 1)
	done, _ := serveListener(t, b, "SASL_PLAINTEXT")
	login(t, done, "bob", "bob-pw")
	later, _ := serveListener(t, b, "SASL_PLAINTEXT")
	expectClosed(t, silent)
	expectClosed(t, halfway)
	expectClosed(t, later) // done's deadline is behind us
	apiVersionsOK(t, done)
}

// TestSASLSessionExpiry (KIP-368): after the session lifetime a request
// closes the connection, unless the client re-authenticates first (with
// the same user; another user fails).
func TestSASLSessionExpiry(t *testing.T) {
	b, clk := saslTestBroker(t)
	nc, _ := serveListener(t, b, "SASL_PLAINTEXT")
	login(t, nc, "alice", "alice-pw")
	clk.add(30 * time.Second)
	apiVersionsOK(t, nc)
	clk.add(31 * time.Second)
	send(t, nc, kmsg.NewPtrApiVersionsRequest(), 1)
	expectClosed(t, nc)

	re, _ := serveListener(t, b, "SASL_PLAINTEXT")
	login(t, re, "alice", "alice-pw")
	clk.add(2 * time.Minute)
	if r := login(t, re, "alice", "alice-pw"); r.ErrorCode != 0 || r.SessionLifetimeMillis != 60000 {
		t.Fatalf("re-authentication: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	apiVersionsOK(t, re)
	r := login(t, re, "bob", "bob-pw")
	if r.ErrorCode != kerr.SaslAuthenticationFailed.Code || !strings.Contains(*r.ErrorMessage, "Cannot change principals") {
		t.Fatalf("re-authentication as bob: %v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	expectClosed(t, re)
}

// TestSASLOnPlaintextListener: SaslHandshake on a PLAINTEXT listener is
// ILLEGAL_SASL_STATE (KafkaApis), and the connection stays.
func TestSASLOnPlaintextListener(t *testing.T) {
	b, _ := saslTestBroker(t)
	nc, c := serveListener(t, b, "PLAINTEXT")
	if hs := handshake(t, nc, "PLAIN", 1); hs.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("%v", kerr.ErrorForCode(hs.ErrorCode))
	}
	apiVersionsOK(t, nc)
	if c.principal() != "User:ANONYMOUS" {
		t.Fatalf("principal %q", c.principal())
	}
}

// TestSSLClientCertPrincipal: on an SSL listener with client
// authentication the principal is the certificate's subject, as Kafka's
// default principal builder makes it; without a certificate it is
// User:ANONYMOUS.
func TestSSLClientCertPrincipal(t *testing.T) {
	b, _ := saslTestBroker(t)
	p := keystoretest.NewPKI(t, "principal CA")
	serverCert := tls.Certificate{Certificate: [][]byte{p.Server.Cert.Raw}, PrivateKey: p.Server.Key}
	for _, tc := range []struct {
		client *keystoretest.Cert
		want   string
	}{{p.Alice, "User:CN=alice,O=zkafka"}, {nil, "User:ANONYMOUS"}} {
		server, client := net.Pipe()
		c := newConn(b, tls.Server(server, &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: p.Roots,
			ClientAuth: tls.VerifyClientCertIfGiven}))
		c.tls, c.listener = true, "SSL"
		b.trackConn(c, true)
		b.goTracked("kafka-conn", c.serve)
		cfg := &tls.Config{RootCAs: p.Roots, ServerName: "localhost"}
		if tc.client != nil {
			cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{tc.client.Cert.Raw}, PrivateKey: tc.client.Key}}
		}
		nc := tls.Client(client, cfg)
		apiVersionsOK(t, nc)
		if got := c.principal(); got != tc.want {
			t.Errorf("principal %q, want %q", got, tc.want)
		}
		nc.Close()
	}
}
