package broker

import (
	"crypto/tls"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/properties"
)

// sslCases are server.properties texts for the SSL listener keys; bad
// names the key the one-line error must name ("" = good).
var sslCases = []struct {
	props string
	bad   string
	check func(c Config) bool
}{
	{"listeners=SSL://127.0.0.1:9093\nssl.keystore.location=/k.p12\nssl.keystore.type=pkcs12", "", func(c Config) bool {
		return c.Listeners[0] == "SSL://127.0.0.1:9093" && c.SSL.KeystoreType == "PKCS12" && c.SSL.KeystoreLocation == "/k.p12"
	}},
	{"listeners=SSL://127.0.0.1:9093", "listeners", nil}, // no keystore
	{"listeners=PLAINTEXT://:9092,SSL://:9093\nssl.keystore.location=/k.pem\nssl.keystore.type=PEM", "", func(c Config) bool {
		return len(c.Listeners) == 2
	}},
	{"listeners=CLIENT://:9092,INTERNAL://:9093\nlistener.security.protocol.map=CLIENT:SSL,INTERNAL:PLAINTEXT\nssl.keystore.location=/k", "", func(c Config) bool {
		p, err := c.listenerProtocol("CLIENT")
		return err == nil && p == "SSL"
	}},
	{"listeners=CLIENT://:9092", "listeners", nil}, // no protocol for CLIENT
	{"listeners=SASL_SSL://:9092", "listeners", nil},
	{"listener.security.protocol.map=CLIENT:TLS", "listener.security.protocol.map", nil},
	{"listener.security.protocol.map=CLIENT", "listener.security.protocol.map", nil},
	{"listeners=PLAINTEXT://:9092\nadvertised.listeners=SSL://h:9093", "advertised.listeners", nil},
	{"ssl.keystore.type=JCEKS", "ssl.keystore.type", nil},
	{"ssl.truststore.type=p12", "ssl.truststore.type", nil},
	{"ssl.truststore.type=jks", "", func(c Config) bool { return c.SSL.TruststoreType == "JKS" }},
	{"ssl.client.auth=required", "", func(c Config) bool { return c.SSL.ClientAuth == "required" }},
	{"ssl.client.auth=want", "ssl.client.auth", nil},
	{"ssl.enabled.protocols=TLSv1.3", "", func(c Config) bool { return slices.Equal(c.SSL.EnabledProtocols, []string{"TLSv1.3"}) }},
	{"ssl.enabled.protocols=SSLv3", "ssl.enabled.protocols", nil},
	{"ssl.protocol=TLSv1.2", "", func(c Config) bool { return c.SSL.Protocol == "TLSv1.2" }},
	{"ssl.protocol=SSL", "ssl.protocol", nil},
	// Per-listener overrides, inline PEM, cipher suites.
	{"listeners=A://:9092,B://:9093\nlistener.security.protocol.map=A:SSL,B:SSL\nssl.keystore.location=/a.p12\nlistener.name.b.ssl.keystore.location=/b.p12\nlistener.name.b.ssl.client.auth=required", "", func(c Config) bool {
		a, _, errA := c.sslFor("A")
		b, _, errB := c.sslFor("B")
		return errA == nil && errB == nil && a.KeystoreLocation == "/a.p12" && a.ClientAuth == "none" &&
			b.KeystoreLocation == "/b.p12" && b.ClientAuth == "required" && c.SSL.KeystoreLocation == "/a.p12"
	}},
	{"listeners=A://:9092,B://:9093\nlistener.security.protocol.map=A:PLAINTEXT,B:SSL\nlistener.name.b.ssl.keystore.location=/b.p12", "", func(c Config) bool {
		b, _, err := c.sslFor("B")
		return err == nil && b.KeystoreLocation == "/b.p12"
	}},
	{"listeners=A://:9092,B://:9093\nlistener.security.protocol.map=A:PLAINTEXT,B:SSL\nlistener.name.a.ssl.keystore.location=/a.p12", "listeners", nil}, // B has none
	{"listener.name.b.ssl.client.auth=always", "listener.name.b.ssl.client.auth", nil},
	{"listeners=SSL://:9093\nssl.keystore.type=PEM\nssl.keystore.key=KEY\nssl.keystore.certificate.chain=CHAIN\nssl.truststore.type=PEM\nssl.truststore.certificates=CAS", "", func(c Config) bool {
		return c.SSL.KeystoreKey == "KEY" && c.SSL.KeystoreCertificateChain == "CHAIN" && c.SSL.TruststoreCertificates == "CAS"
	}},
	{"ssl.cipher.suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, SSL_RSA_WITH_AES_128_CBC_SHA,TLS_AES_128_GCM_SHA256", "", func(c Config) bool {
		return len(c.SSL.CipherSuites) == 3
	}},
	{"ssl.cipher.suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_MADE_UP", "ssl.cipher.suites", nil},
	{"listener.name.x.ssl.cipher.suites=ECDHE-RSA-AES128-GCM-SHA256", "listener.name.x.ssl.cipher.suites", nil}, // OpenSSL's name
	{"listener.name.x.ssl.enabled.protocols=TLSv1.3", "", func(c Config) bool {
		x, _, err := c.sslFor("x")
		return err == nil && slices.Equal(x.EnabledProtocols, []string{"TLSv1.3"}) && len(c.SSL.EnabledProtocols) == 2
	}},
}

// TestCipherSuitesTLSConfig: ssl.cipher.suites becomes the TLS 1.2
// suites; a list without a TLS 1.3 suite caps the version at TLS 1.2, one
// with TLS 1.3 suites only raises the minimum to TLS 1.3.
func TestCipherSuitesTLSConfig(t *testing.T) {
	for _, tc := range []struct {
		names    []string
		lo, hi   uint16
		suites   []uint16
		refusing bool
	}{
		{nil, tls.VersionTLS12, tls.VersionTLS13, nil, false},
		{[]string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, tls.VersionTLS12, tls.VersionTLS12, []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}, false},
		{[]string{"TLS_AES_256_GCM_SHA384"}, tls.VersionTLS13, tls.VersionTLS13, nil, false},
		{[]string{"TLS_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}, tls.VersionTLS12, tls.VersionTLS13, []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}, false},
	} {
		s := DefaultSSLConfig()
		s.CipherSuites = tc.names
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}
		err := s.applyCipherSuites(cfg)
		if err != nil || cfg.MinVersion != tc.lo || cfg.MaxVersion != tc.hi || !slices.Equal(cfg.CipherSuites, tc.suites) {
			t.Errorf("%v: %x-%x %x %v", tc.names, cfg.MinVersion, cfg.MaxVersion, cfg.CipherSuites, err)
		}
	}
	s := DefaultSSLConfig()
	s.CipherSuites, s.EnabledProtocols = []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, []string{"TLSv1.3"}
	lo, hi, _ := s.versions()
	if err := s.applyCipherSuites(&tls.Config{MinVersion: lo, MaxVersion: hi}); err == nil {
		t.Error("TLS 1.2 suites only with TLSv1.3 only: accepted")
	}
}

func TestParsePropertiesSSLListeners(t *testing.T) {
	for _, tc := range sslCases {
		c, err := ParseProperties(strings.NewReader(tc.props), nil)
		var e *properties.Error
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%q: %v", tc.props, err)
		case tc.bad == "" && !tc.check(c):
			t.Errorf("%q: parsed %+v", tc.props, c)
		case tc.bad != "" && (!errors.As(err, &e) || e.Key != tc.bad):
			t.Errorf("%q: err %v, want one naming %s", tc.props, err, tc.bad)
		case tc.bad != "" && strings.Contains(err.Error(), "\n"):
			t.Errorf("%q: error on several lines: %q", tc.props, err)
		}
	}
}

// TestSSLVersions: ssl.protocol caps ssl.enabled.protocols.
func TestSSLVersions(t *testing.T) {
	s := DefaultSSLConfig()
	if lo, hi, err := s.versions(); err != nil || lo != tls.VersionTLS12 || hi != tls.VersionTLS13 {
		t.Fatalf("default: %x %x %v", lo, hi, err)
	}
	s.Protocol = "TLSv1.2"
	if lo, hi, err := s.versions(); err != nil || lo != tls.VersionTLS12 || hi != tls.VersionTLS12 {
		t.Fatalf("ssl.protocol=TLSv1.2: %x %x %v", lo, hi, err)
	}
	s.EnabledProtocols = []string{"TLSv1.3"}
	if _, _, err := s.versions(); err == nil {
		t.Fatal("TLSv1.3 only under ssl.protocol=TLSv1.2 accepted")
	}
}
