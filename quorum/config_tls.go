package quorum

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/internal/keystore"
	"github.com/zkafka/zkafka/internal/properties"
)

// TLSConfig is the client TLS of zoo.cfg: the ssl.* keys ZooKeeper's
// X509Util reads for the secureClientPort (ssl.quorum.* is quorum TLS,
// which zkafka does not do).
type TLSConfig struct {
	KeyStore, KeyStorePassword, KeyStoreType       string // ssl.keyStore.*
	TrustStore, TrustStorePassword, TrustStoreType string // ssl.trustStore.*
	// ClientAuth is ssl.clientAuth: tls.NoClientCert (none),
	// VerifyClientCertIfGiven (want) or RequireAndVerifyClientCert (need,
	// ZooKeeper's default).
	ClientAuth   tls.ClientAuthType
	MinVersion   uint16   // from ssl.enabledProtocols, else ssl.protocol
	MaxVersion   uint16   // 0: the highest Go knows
	CipherSuites []uint16 // ssl.ciphersuites; nil: Go's defaults
}

func defaultTLSConfig() TLSConfig {
	return TLSConfig{ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
}

// tlsProtocols are the ssl.protocol / ssl.enabledProtocols names Go
// speaks; SSLv3 and TLSv1.0/1.1 are refused as Java 17 disables them.
var tlsProtocols = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

// applyTLS handles one ssl.* key or secureClientPort(Address); it reports
// false for keys it does not know.
func (p *configParser) applyTLS(prop properties.Property) (bool, error) {
	t := &p.c.TLS
	v := prop.Trimmed()
	var err error
	switch prop.Key {
	case "secureClientPort":
		p.c.SecureClientPort, err = portProp(prop)
	case "secureClientPortAddress":
		p.c.SecureClientPortAddress, err = hostProp(prop, v)
	case "ssl.keyStore.location":
		t.KeyStore = v
	case "ssl.keyStore.password":
		t.KeyStorePassword = prop.Value
	case "ssl.keyStore.passwordPath":
		t.KeyStorePassword, err = passwordFile(prop)
	case "ssl.keyStore.type":
		t.KeyStoreType, err = storeType(prop)
	case "ssl.trustStore.location":
		t.TrustStore = v
	case "ssl.trustStore.password":
		t.TrustStorePassword = prop.Value
	case "ssl.trustStore.passwordPath":
		t.TrustStorePassword, err = passwordFile(prop)
	case "ssl.trustStore.type":
		t.TrustStoreType, err = storeType(prop)
	case "ssl.clientAuth":
		t.ClientAuth, err = clientAuthProp(prop)
	case "ssl.protocol":
		if _, ok := p.set["ssl.enabledProtocols"]; !ok {
			t.MinVersion, t.MaxVersion, err = protocolsProp(prop)
		}
	case "ssl.enabledProtocols":
		t.MinVersion, t.MaxVersion, err = protocolsProp(prop)
	case "ssl.ciphersuites":
		t.CipherSuites, err = cipherSuitesProp(prop)
	case "X509AuthenticationProvider.superUser", "zookeeper.X509AuthenticationProvider.superUser":
		p.c.X509SuperUser = v
	case "serverCnxnFactory":
		// NIO or Netty: one Go server does both jobs.
	default:
		return false, nil
	}
	return true, err
}

func storeType(prop properties.Property) (string, error) {
	if _, err := keystore.ParseType(prop.Trimmed(), ""); err != nil && prop.Trimmed() != "" {
		return "", prop.Bad("must be PEM, PKCS12 or JKS")
	}
	return prop.Trimmed(), nil
}

// passwordFile is ssl.*.passwordPath: the password is the file's content
// (ZooKeeper's SecretUtils.readSecret strips the trailing newline... and
// every surrounding space, as String.trim).
func passwordFile(prop properties.Property) (string, error) {
	b, err := os.ReadFile(prop.Trimmed())
	if err != nil {
		return "", prop.Bad("must name a readable file: " + err.Error())
	}
	return properties.Trim(string(b)), nil
}

func clientAuthProp(prop properties.Property) (tls.ClientAuthType, error) {
	switch strings.ToLower(prop.Trimmed()) {
	case "none":
		return tls.NoClientCert, nil
	case "want":
		return tls.VerifyClientCertIfGiven, nil
	case "need", "":
		return tls.RequireAndVerifyClientCert, nil
	}
	return 0, prop.Bad("must be none, want or need")
}

// protocolsProp reads a comma-separated protocol list into a version range
// (Go enables a range, not a set: TLSv1.2 and TLSv1.3 are all there is).
func protocolsProp(prop properties.Property) (lo, hi uint16, err error) {
	for _, name := range strings.Split(prop.Trimmed(), ",") {
		v, ok := tlsProtocols[strings.TrimSpace(name)]
		if !ok {
			return 0, 0, prop.Bad("must be TLSv1.2, TLSv1.3 or both, comma-separated")
		}
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return lo, hi, nil
}

// cipherSuitesProp maps Java's cipher suite names (the IANA names, which Go
// uses too) to Go's secure suites. TLS 1.3 suites are accepted but not
// configurable in Go: all three are always on.
func cipherSuitesProp(prop properties.Property) ([]uint16, error) {
	known := map[string]*tls.CipherSuite{}
	for _, cs := range tls.CipherSuites() {
		known[cs.Name] = cs
	}
	var ids []uint16
	for _, name := range strings.Split(prop.Trimmed(), ",") {
		name = strings.TrimSpace(name)
		cs, ok := known[name]
		if !ok {
			return nil, prop.Bad(fmt.Sprintf("%q is not a cipher suite zkafka supports (one of the names Go's crypto/tls lists as secure, e.g. TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)", name))
		}
		if !isTLS13Only(cs) {
			ids = append(ids, cs.ID)
		}
	}
	return ids, nil
}

func isTLS13Only(cs *tls.CipherSuite) bool {
	return len(cs.SupportedVersions) == 1 && cs.SupportedVersions[0] == tls.VersionTLS13
}

// checkTLS: a secureClientPort needs a key store, and a key store a port;
// ZooKeeper finds the first missing at start, zkafka at parse.
func (p *configParser) checkTLS() error {
	if p.c.SecureClientPort != 0 && p.c.TLS.KeyStore == "" {
		return p.set["secureClientPort"].Bad("needs ssl.keyStore.location (the server's certificate and key)")
	}
	return nil
}

// SecureClientAddr is the address the TLS client listener binds.
func (c Config) SecureClientAddr() string {
	host := c.SecureClientPortAddress
	if host == "" {
		host = c.ClientPortAddress
	}
	return net.JoinHostPort(host, strconv.Itoa(c.SecureClientPort))
}

// serverTLS loads the key and trust stores into a server tls.Config.
func (t TLSConfig) serverTLS() (*tls.Config, error) {
	cert, err := keystore.LoadKeyPair(t.KeyStore, t.KeyStorePassword, t.KeyStoreType)
	if err != nil {
		return nil, fmt.Errorf("ssl.keyStore: %w", err)
	}
	tc := &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   t.ClientAuth,
		MinVersion:   t.MinVersion,
		MaxVersion:   t.MaxVersion,
		CipherSuites: t.CipherSuites,
	}
	if t.TrustStore != "" {
		if tc.ClientCAs, err = keystore.LoadTrustPool(t.TrustStore, t.TrustStorePassword, t.TrustStoreType); err != nil {
			return nil, fmt.Errorf("ssl.trustStore: %w", err)
		}
	}
	return tc, nil
}
