package kafkaacl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

// The principals of the test certificates.
const (
	admin = "User:CN=admin,O=zkafka"
	alice = "User:CN=alice,O=zkafka"
	bob   = "User:CN=bob,O=zkafka"
	anon  = "User:ANONYMOUS"
	// brokerP is the brokers' own principal: the controller's requests go
	// over the SSL listener with the broker's certificate.
	brokerP = "User:CN=localhost"
)

// pki is a CA made for one test, the broker's keystore and truststore,
// and one client certificate per principal.
type pki struct {
	roots     *x509.CertPool
	dir       string
	caPEM     string // the CA certificate (a PEM truststore)
	serverP12 string // the broker's key and certificate, password "changeit"
	certs     map[string]*keystoretest.Cert
	clients   map[string]tls.Certificate
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	kp := keystoretest.NewPKI(t, "acl test CA")
	p := &pki{roots: kp.Roots, dir: t.TempDir(), certs: map[string]*keystoretest.Cert{
		alice: kp.Alice, bob: kp.Bob,
		admin: keystoretest.Leaf(t, kp.CA, pkix.Name{CommonName: "admin", Organization: []string{"zkafka"}}),
	}, clients: map[string]tls.Certificate{}}
	p.caPEM = keystoretest.WriteCertPEM(t, p.dir, "ca.pem", kp.CA)
	p.serverP12 = keystoretest.WritePKCS12(t, p.dir, "server.p12", "changeit", kp.Server, kp.CA)
	for who, c := range p.certs {
		p.clients[who] = tls.Certificate{Certificate: [][]byte{c.Cert.Raw, kp.CA.Cert.Raw}, PrivateKey: c.Key, Leaf: c.Cert}
	}
	return p
}

// secured is the configuration of the test brokers: PLAINTEXT and SSL
// (client certificates required) listeners, SSL between the brokers, the
// ACL authorizer, admin and the brokers super users.
func (p *pki) secured(mods ...func(*broker.Config)) kafkaenv.Option {
	return kafkaenv.Configure(append([]func(*broker.Config){func(c *broker.Config) {
		c.Listeners = []string{"PLAINTEXT://127.0.0.1:0", "SSL://127.0.0.1:0"}
		c.SSL.KeystoreType, c.SSL.KeystoreLocation, c.SSL.KeystorePassword = "PKCS12", p.serverP12, "changeit"
		c.SSL.TruststoreType, c.SSL.TruststoreLocation = "PEM", p.caPEM
		c.SSL.ClientAuth = "required"
		c.InterBroker.ListenerName = "SSL"
		c.Authz = broker.AuthzConfig{ClassName: broker.AclAuthorizerClass, SuperUsers: []string{admin, brokerP}}
	}}, mods...)...)
}

// as is a kgo client of e for principal who: over SSL with who's
// certificate, or over PLAINTEXT for anon.
func (p *pki) as(e *kafkaenv.Env, who string, opts ...kgo.Opt) *kgo.Client {
	if who == anon {
		return e.Client(opts...)
	}
	cfg := &tls.Config{RootCAs: p.roots, MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{p.clients[who]}}
	return e.Client(append([]kgo.Opt{kgo.SeedBrokers(e.Addrs[1]), kgo.DialTLSConfig(cfg), kgo.RequestRetries(2)}, opts...)...)
}

// admin is a kadm client of e for who.
func (p *pki) admin(e *kafkaenv.Env, who string) *kadm.Client { return kadm.NewClient(p.as(e, who)) }

// waitFor polls cond every 20 ms for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
	}
}

func ctx(t testing.TB) context.Context { return kafkaenv.Context(t, 30*time.Second) }
