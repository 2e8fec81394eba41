package kafkassl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/youmark/pkcs8"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// listenerSSLBroker starts a broker with a PLAINTEXT listener and four TLS
// ones (Addrs 1-4): SSL with the broker-wide PKCS12 keystore of p; OWN with
// its own keystore from listener.name.own.ssl.*, inline PEM (the key an
// encrypted PKCS#8 one, as a one-line server.properties value gives it)
// signed by another CA; STRICT whose ssl.cipher.suites is one TLS 1.2
// suite; and ONLY13 with ssl.enabled.protocols=TLSv1.3.
func listenerSSLBroker(t *testing.T, p *keystoretest.BrokerFiles) (e *kafkaenv.Env, ownRoots *x509.CertPool) {
	other := keystoretest.CA(t, "other CA")
	own := keystoretest.Leaf(t, other, pkix.Name{CommonName: "own-listener"})
	encDER, err := pkcs8.MarshalPrivateKey(own.Key, []byte("key-pass"), nil)
	if err != nil {
		t.Fatal(err)
	}
	oneLine := func(b []byte) string { return strings.Join(strings.Fields(string(b)), " ") }
	props := strings.Join([]string{
		"listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,OWN://127.0.0.1:0,STRICT://127.0.0.1:0,ONLY13://127.0.0.1:0",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,OWN:SSL,STRICT:SSL,ONLY13:SSL",
		"ssl.keystore.type=PKCS12", "ssl.keystore.location=" + p.ServerP12, "ssl.keystore.password=changeit",
		"listener.name.own.ssl.keystore.type=PEM",
		"listener.name.own.ssl.keystore.location=",
		"listener.name.own.ssl.keystore.key=" + oneLine(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: encDER})),
		"listener.name.own.ssl.keystore.certificate.chain=" + oneLine(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: own.Cert.Raw})),
		"listener.name.own.ssl.key.password=key-pass",
		"listener.name.strict.ssl.cipher.suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
		"listener.name.only13.ssl.enabled.protocols=TLSv1.3",
	}, "\n")
	parsed, err := broker.ParseProperties(strings.NewReader(props), nil)
	if err != nil {
		t.Fatalf("server.properties: %v", err)
	}
	e = kafkaenv.Start(t, kafkaenv.Configure(func(c *broker.Config) {
		c.Listeners, c.ListenerProtocols = parsed.Listeners, parsed.ListenerProtocols
		c.SSL, c.ListenerSSL = parsed.SSL, parsed.ListenerSSL
	}))
	ownRoots = x509.NewCertPool()
	ownRoots.AddCert(other.Cert)
	return e, ownRoots
}

// handshake connects a franz-go client to addr with cfg and sends one
// request; it returns the server certificate's CN seen, or the error.
func handshake(t *testing.T, e *kafkaenv.Env, addr string, cfg *tls.Config) (string, error) {
	var cn string
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		cn = cs.PeerCertificates[0].Subject.CommonName
		return nil
	}
	c := e.Client(kgo.SeedBrokers(addr), kgo.DialTLSConfig(cfg), kgo.DialTimeout(3*time.Second))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	return cn, c.Ping(ctx)
}

// TestListenerSSLOverrides: each listener answers with its own ssl.* —
// OWN with the certificate of its inline, encrypted PEM keystore (and not
// the broker-wide one), STRICT only to a client offering its one cipher
// suite (a TLS 1.2 client with another suite, and a TLS 1.3 client, are
// refused), ONLY13 only to TLS 1.3 clients.
func TestListenerSSLOverrides(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	e, ownRoots := listenerSSLBroker(t, p)
	sslAddr, ownAddr, strictAddr, only13Addr := e.Addrs[1], e.Addrs[2], e.Addrs[3], e.Addrs[4]

	if cn, err := handshake(t, e, sslAddr, &tls.Config{RootCAs: p.CAPool}); err != nil || cn != "localhost" {
		t.Fatalf("SSL listener: %q %v", cn, err)
	}
	if cn, err := handshake(t, e, ownAddr, &tls.Config{RootCAs: ownRoots}); err != nil || cn != "own-listener" {
		t.Fatalf("OWN listener, its own certificate: %q %v", cn, err)
	}
	if _, err := handshake(t, e, ownAddr, &tls.Config{RootCAs: p.CAPool}); err == nil {
		t.Fatal("OWN listener verified with the broker-wide CA: not its own keystore")
	}

	tls12 := func(suite uint16) *tls.Config {
		return &tls.Config{RootCAs: p.CAPool, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}}
	}
	if _, err := handshake(t, e, strictAddr, tls12(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)); err != nil {
		t.Fatalf("STRICT, the listed suite: %v", err)
	}
	if _, err := handshake(t, e, strictAddr, tls12(tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)); err == nil {
		t.Fatal("STRICT accepted a suite outside ssl.cipher.suites")
	}
	if _, err := handshake(t, e, strictAddr, &tls.Config{RootCAs: p.CAPool, MinVersion: tls.VersionTLS13}); err == nil {
		t.Fatal("STRICT accepted TLS 1.3, whose suites ssl.cipher.suites does not list")
	}
	if _, err := handshake(t, e, sslAddr, tls12(tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)); err != nil {
		t.Fatalf("the SSL listener (no ssl.cipher.suites) refused a default suite: %v", err)
	}

	if _, err := handshake(t, e, only13Addr, &tls.Config{RootCAs: p.CAPool, MaxVersion: tls.VersionTLS12}); err == nil {
		t.Fatal("ONLY13 accepted TLS 1.2")
	}
	if _, err := handshake(t, e, only13Addr, &tls.Config{RootCAs: p.CAPool, MinVersion: tls.VersionTLS13}); err != nil {
		t.Fatalf("ONLY13, TLS 1.3: %v", err)
	}
}

// TestListenerSSLBadKeyPassword: a listener whose encrypted key's
// ssl.key.password is wrong stops the broker at start with an error naming
// the listener's key and showing no secret.
func TestListenerSSLBadKeyPassword(t *testing.T) {
	p := keystoretest.NewBrokerFiles(t)
	other := keystoretest.CA(t, "other CA")
	own := keystoretest.Leaf(t, other, pkix.Name{CommonName: "own-listener"})
	encDER, err := pkcs8.MarshalPrivateKey(own.Key, []byte("key-pass"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := broker.DefaultConfig(t.TempDir())
	cfg.ZooKeeperConnect = kafkaenv.ZooKeeper() + "/badkeypass"
	cfg.Listeners = []string{"PLAINTEXT://127.0.0.1:0", "OWN://127.0.0.1:0"}
	cfg.ListenerProtocols = map[string]string{"PLAINTEXT": "PLAINTEXT", "OWN": "SSL"}
	cfg.SSL.KeystoreType, cfg.SSL.KeystoreLocation, cfg.SSL.KeystorePassword = "PKCS12", p.ServerP12, "changeit"
	cfg.ListenerSSL = map[string]map[string]string{"OWN": {
		"ssl.keystore.type": "PEM", "ssl.keystore.location": "", "ssl.key.password": "wrong-pass",
		"ssl.keystore.key":               string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: encDER})),
		"ssl.keystore.certificate.chain": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: own.Cert.Raw})),
	}}
	b, err := broker.New(cfg, nil)
	if err == nil {
		b.Shutdown(context.Background())
		t.Fatal("a wrong ssl.key.password was accepted")
	}
	msg := err.Error()
	if !strings.Contains(msg, "listener.name.own.ssl.keystore.key") || strings.Contains(msg, "wrong-pass") || strings.Contains(msg, "BEGIN") || strings.Contains(msg, "\n") {
		t.Fatalf("error: %q", msg)
	}
}
