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
