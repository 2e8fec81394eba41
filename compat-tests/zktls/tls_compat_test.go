//go:build compat

package zktls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// zooCfg is the TLS part of zoo.cfg, the same for both servers, with the
// stores of the given type ("PKCS12" or "PEM").
func zooCfg(t *testing.T, c *keystoretest.PKI, typ string, port int) []string {
	dir := t.TempDir()
	var key, trust string
	switch typ {
	case "PKCS12":
		key = keystoretest.WritePKCS12(t, dir, "server.p12", "secret", c.Server, c.CA)
		trust = keystoretest.WritePKCS12Trust(t, dir, "trust.p12", "secret", c.CA)
	case "PEM":
		key = keystoretest.WritePEM(t, dir, "server.pem", c.Server)
		trust = keystoretest.WriteCertPEM(t, dir, "trust.pem", c.CA)
	}
	lines := []string{
		"secureClientPort=" + strconv.Itoa(port),
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
		"ssl.keyStore.location=" + key, "ssl.keyStore.type=" + typ,
		"ssl.trustStore.location=" + trust, "ssl.trustStore.type=" + typ,
		"ssl.clientAuth=need",
	}
	if typ == "PKCS12" {
		// For PEM, ZooKeeper takes a key store password as the key's
		// encryption password: the PEM key here is not encrypted.
		lines = append(lines, "ssl.keyStore.password=secret", "ssl.trustStore.password=secret")
	}
	return lines
}

// clientTLS is what a client holding cert (nil: none) dials with.
func clientTLS(c *keystoretest.PKI, cert *keystoretest.Cert) *tls.Config {
	tc := &tls.Config{RootCAs: c.Roots, ServerName: "localhost"}
	if cert != nil {
		tc.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Cert.Raw}, PrivateKey: cert.Key}}
	}
	return tc
}

// refused reports whether a TLS client gets no answer to a four-letter
// word (the server refuses it during or right after the handshake).
func refused(addr string, tc *tls.Config) bool {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, tc)
	if err != nil {
		return true
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return true
	}
	_, err = c.Read(make([]byte, 1))
	return err != nil
}

// TestSecureClientPort runs one check on both servers for each store type.
func TestSecureClientPort(t *testing.T) {
	c := keystoretest.NewPKI(t, "zkafka compat CA")
	for _, typ := range []string{"PKCS12", "PEM"} {
		for kind, start := range map[string]func(testing.TB, zkserver.Options) *zkserver.Server{
			"apache": zkserver.StartApache, "zkafka": zkserver.StartZkafka,
		} {
			t.Run(typ+"/"+kind, func(t *testing.T) {
				port := zkserver.FreePort(t)
				start(t, zkserver.Options{ExtraConfig: zooCfg(t, c, typ, port),
					FourLetterWords: []string{"srvr", "ruok"}, ApacheClassPath: zkserver.NettyJars})
				checkSecurePort(t, c, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			})
		}
	}
}

func checkSecurePort(t *testing.T, c *keystoretest.PKI, addr string) {
	if !refused(addr, clientTLS(c, nil)) {
		t.Fatal("ssl.clientAuth=need: a client without a certificate was served")
	}
	alice, bob := zkserver.Session(t, addr, clientTLS(c, c.Alice)), zkserver.Session(t, addr, clientTLS(c, c.Bob))
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
		t.Fatal(err)
	}
	acl, _, err := alice.GetACL("/mine")
	if err != nil || len(acl) != 1 || acl[0] != aliceOnly[0] {
		t.Fatalf("auth ACL became %v (%v), want %v", acl, err, aliceOnly)
	}
}

// TestSecureClientAuthWantNone: under ssl.clientAuth=want a client without
// a certificate gets a session with no x509 identity, one with a
// certificate gets its identity; under none the server asks for no
// certificate, so nobody has one. Apache ZooKeeper needs no
// authProvider.x509 line for this: its secure port has the provider.
func TestSecureClientAuthWantNone(t *testing.T) {
	c := keystoretest.NewPKI(t, "zkafka compat CA")
	for _, auth := range []string{"want", "none"} {
		for kind, start := range map[string]func(testing.TB, zkserver.Options) *zkserver.Server{
			"apache": zkserver.StartApache, "zkafka": zkserver.StartZkafka,
		} {
			t.Run(auth+"/"+kind, func(t *testing.T) {
				port := zkserver.FreePort(t)
				var cfg []string
				for _, l := range zooCfg(t, c, "PKCS12", port) {
					switch {
					case l == "ssl.clientAuth=need":
						l = "ssl.clientAuth=" + auth
					case strings.HasPrefix(l, "authProvider."):
						continue
					}
					cfg = append(cfg, l)
				}
				start(t, zkserver.Options{ExtraConfig: cfg, ApacheClassPath: zkserver.NettyJars})
				addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
				anon := zkserver.Session(t, addr, clientTLS(c, nil))
				if _, err := anon.Create("/anon", nil, 0, zk.AuthACL(zk.PermAll)); !errors.Is(err, zk.ErrInvalidACL) {
					t.Fatalf("auth ACL without a certificate: %v, want invalid ACL", err)
				}
				alice := zkserver.Session(t, addr, clientTLS(c, c.Alice))
				_, err := alice.Create("/alice", nil, 0, zk.AuthACL(zk.PermAll))
				if auth == "want" && err != nil {
					t.Fatalf("want: auth ACL with a certificate: %v", err)
				}
				if auth == "none" && !errors.Is(err, zk.ErrInvalidACL) {
					t.Fatalf("none: auth ACL with an unasked certificate: %v, want invalid ACL", err)
				}
			})
		}
	}
}

// TestSecureClientPortJKS serves the JKS key store made by keytool
// (internal/keystore/testdata, see its TestJKS) on both servers.
func TestSecureClientPortJKS(t *testing.T) {
	root, err := zkserver.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "internal", "keystore", "testdata")
	pemCert, err := os.ReadFile(filepath.Join(dir, "server.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemCert)
	for kind, start := range map[string]func(testing.TB, zkserver.Options) *zkserver.Server{
		"apache": zkserver.StartApache, "zkafka": zkserver.StartZkafka,
	} {
		t.Run(kind, func(t *testing.T) {
			port := zkserver.FreePort(t)
			start(t, zkserver.Options{ApacheClassPath: zkserver.NettyJars, ExtraConfig: []string{
				"secureClientPort=" + strconv.Itoa(port),
				"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
				"ssl.keyStore.location=" + filepath.Join(dir, "keystore.jks"),
				"ssl.keyStore.password=changeit", "ssl.keyStore.type=JKS", "ssl.clientAuth=none",
			}})
			c := zkserver.Session(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), &tls.Config{RootCAs: roots, ServerName: "localhost"})
			if _, err := c.Create("/jks", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
		})
	}
}
