package quorum

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// pemTLS is a TLSConfig with the server's key and the CA in PEM files.
func pemTLS(t *testing.T, p *keystoretest.PKI, auth tls.ClientAuthType) TLSConfig {
	dir := t.TempDir()
	tc := defaultTLSConfig()
	tc.KeyStore = keystoretest.WritePEM(t, dir, "server.pem", p.Server)
	tc.TrustStore = keystoretest.WriteCertPEM(t, dir, "ca.pem", p.CA)
	tc.ClientAuth = auth
	return tc
}

// clientTLS is what a client holding cert (nil: none) dials with.
func clientTLS(roots *x509.CertPool, cert *keystoretest.Cert) *tls.Config {
	tc := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
	if cert != nil {
		tc.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Cert.Raw}, PrivateKey: cert.Key, Leaf: cert.Cert}}
	}
	return tc
}

// startSecureServer starts a standalone server with a TLS client port on
// a free port of 127.0.0.1.
func startSecureServer(t *testing.T, tc TLSConfig) *Server {
	t.Helper()
	return startSecureServerCfg(t, tc)
}

func startSecureServerCfg(t *testing.T, tc TLSConfig, edit ...func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig(t.TempDir())
	cfg.TickTime = 100 * time.Millisecond
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 0, 0
	cfg.TLS = tc
	for _, e := range edit {
		e(&cfg)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := start(cfg, slog.New(slog.DiscardHandler), l, startOptions{secure: sl})
	if err != nil {
		l.Close()
		sl.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// connectTLS opens a go-zookeeper session over TLS and waits for it.
func connectTLS(t *testing.T, s *Server, tc *tls.Config) *zk.Conn {
	t.Helper()
	dialer := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, addr, tc)
	}
	return connectAt(t, s.SecureAddr().String(), dialer)
}

// roundTrip creates and reads a node, the proof that requests flow.
func roundTrip(t *testing.T, c *zk.Conn, path string) {
	t.Helper()
	if _, err := c.Create(path, []byte("over tls"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	data, _, err := c.Get(path)
	if err != nil || string(data) != "over tls" {
		t.Fatalf("get %s: %q %v", path, data, err)
	}
}

// TestSecurePortKeyStores serves the secure port from a PEM, a PKCS12
// and a JKS key store (the JKS made by keytool, see internal/keystore's
// TestJKS), each with a trust store of the same type.
func TestSecurePortKeyStores(t *testing.T) {
	p := keystoretest.NewPKI(t, "zkafka test CA")
	dir := t.TempDir()
	fixture, err := x509.ParseCertificate(jksFixtureCert(t))
	if err != nil {
		t.Fatal(err)
	}
	jksRoots := x509.NewCertPool()
	jksRoots.AddCert(fixture)
	pkcs12 := defaultTLSConfig()
	pkcs12.KeyStore = keystoretest.WritePKCS12(t, dir, "server.p12", "secret", p.Server, p.CA)
	pkcs12.KeyStorePassword, pkcs12.KeyStoreType = "secret", "PKCS12"
	pkcs12.TrustStore = keystoretest.WritePKCS12Trust(t, dir, "trust.p12", "secret", p.CA)
	pkcs12.TrustStorePassword, pkcs12.TrustStoreType = "secret", "PKCS12"
	jks := defaultTLSConfig()
	jks.KeyStore, jks.KeyStorePassword, jks.KeyStoreType = "../internal/keystore/testdata/keystore.jks", "changeit", "JKS"
	jks.ClientAuth = tls.NoClientCert
	for _, tc := range []struct {
		name   string
		tls    TLSConfig
		client *tls.Config
	}{
		{"pem", pemTLS(t, p, tls.RequireAndVerifyClientCert), clientTLS(p.Roots, p.Alice)},
		{"pkcs12", pkcs12, clientTLS(p.Roots, p.Alice)},
		{"jks", jks, clientTLS(jksRoots, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSecureServer(t, tc.tls)
			roundTrip(t, connectTLS(t, s, tc.client), "/"+tc.name)
		})
	}
}

func jksFixtureCert(t *testing.T) []byte {
	t.Helper()
	tc := defaultTLSConfig()
	tc.KeyStore, tc.KeyStorePassword = "../internal/keystore/testdata/keystore.jks", "changeit"
	c, err := tc.serverTLS()
	if err != nil {
		t.Fatal(err)
	}
	return c.Certificates[0].Certificate[0]
}

// TestSecurePortNeedRefusesNoCertificate: under ssl.clientAuth=need (the
// default) a client without a certificate gets no session; one with a
// certificate of another CA neither.
func TestSecurePortNeedRefusesNoCertificate(t *testing.T) {
	p := keystoretest.NewPKI(t, "zkafka test CA")
	s := startSecureServer(t, pemTLS(t, p, tls.RequireAndVerifyClientCert))
	other := keystoretest.Leaf(t, keystoretest.CA(t, "another CA"), pkix.Name{CommonName: "mallory"})
	for name, cert := range map[string]*keystoretest.Cert{"none": nil, "untrusted": other} {
		t.Run(name, func(t *testing.T) {
			err := handshakeAndRead(s.SecureAddr().String(), clientTLS(p.Roots, cert))
			if err == nil {
				t.Fatal("the server answered a client it should refuse")
			}
		})
	}
	// The same port serves a client with a good certificate.
	if err := handshakeAndRead(s.SecureAddr().String(), clientTLS(p.Roots, p.Alice)); !errors.Is(err, errAnswered) {
		t.Fatalf("good client: %v", err)
	}
}

var errAnswered = errors.New("answered")

// handshakeAndRead sends a four-letter word over TLS and reads the
// answer: errAnswered when one comes, else the error that ended it (in
// TLS 1.3 the server refuses a client certificate after the client's
// side of the handshake is done, so the refusal shows on the read).
func handshakeAndRead(addr string, tc *tls.Config) error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, tc)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return err
	}
	buf := make([]byte, 1)
	if _, err := c.Read(buf); err != nil {
		return err
	}
	return errAnswered
}

// TestSecurePortX509ACL: the client certificate's subject DN is the x509
// identity of the connection; an x509 ACL lets only that client in, and
// an "auth" ACL expands to it.
func TestSecurePortX509ACL(t *testing.T) {
	p := keystoretest.NewPKI(t, "zkafka test CA")
	s := startSecureServer(t, pemTLS(t, p, tls.RequireAndVerifyClientCert))
	alice := connectTLS(t, s, clientTLS(p.Roots, p.Alice))
	bob := connectTLS(t, s, clientTLS(p.Roots, p.Bob))
	aliceOnly := []zk.ACL{{Perms: zk.PermAll, Scheme: "x509", ID: "CN=alice,O=zkafka"}}
	if _, err := alice.Create("/alice", []byte("a"), 0, aliceOnly); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alice.Get("/alice"); err != nil {
		t.Fatalf("alice reads her node: %v", err)
	}
	if _, _, err := bob.Get("/alice"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("bob reads alice's node: %v, want no auth", err)
	}
	if _, err := alice.Create("/mine", nil, 0, zk.AuthACL(zk.PermAll)); err != nil {
		t.Fatalf("auth ACL with an x509 identity: %v", err)
	}
	acl, _, err := alice.GetACL("/mine")
	if err != nil || len(acl) != 1 || acl[0] != aliceOnly[0] {
		t.Fatalf("auth ACL became %v (%v), want %v", acl, err, aliceOnly)
	}
}

// TestSecurePortX509SuperUser: X509AuthenticationProvider.superUser's DN
// passes every ACL.
func TestSecurePortX509SuperUser(t *testing.T) {
	p := keystoretest.NewPKI(t, "zkafka test CA")
	tc := pemTLS(t, p, tls.RequireAndVerifyClientCert)
	s := startSecureServerCfg(t, tc, func(c *Config) { c.X509SuperUser = "CN=bob,O=zkafka" })
	alice := connectTLS(t, s, clientTLS(p.Roots, p.Alice))
	bob := connectTLS(t, s, clientTLS(p.Roots, p.Bob))
	if _, err := alice.Create("/alice", []byte("a"), 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "x509", ID: "CN=alice,O=zkafka"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bob.Get("/alice"); err != nil {
		t.Fatalf("the x509 super user reads alice's node: %v", err)
	}
}

// TestSecurePortBadStoreFailsStart: a key store that cannot be read stops
// the start, naming the key, as ZooKeeper fails to start its factory.
func TestSecurePortBadStoreFailsStart(t *testing.T) {
	cfg := DefaultConfig(t.TempDir())
	cfg.SecureClientPort = 1
	cfg.TLS.KeyStore = filepath.Join(t.TempDir(), "missing.p12")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := StartWithListener(cfg, slog.New(slog.DiscardHandler), l)
	if err == nil {
		s.Close()
		t.Fatal("started without its key store")
	}
	if !strings.Contains(err.Error(), "ssl.keyStore") {
		t.Fatalf("err %v, want one naming ssl.keyStore", err)
	}
}
