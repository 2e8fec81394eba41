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

// TLSConfig is one TLS configuration of zoo.cfg: the ssl.* keys ZooKeeper's
// X509Util reads for the secureClientPort, or the ssl.quorum.* keys of
// quorum TLS (sslQuorum=true, secure_quorum.go).
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
	// HostnameVerification is ssl.quorum.hostnameVerification (default
	// true): a server dialing a peer checks that the peer's certificate
	// names the host of its server.N line. The client port, a server
	// side only, does not use it (Go verifies no client host names).
	HostnameVerification bool
}

func defaultTLSConfig() TLSConfig {
	return TLSConfig{ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12, HostnameVerification: true}
}

// tlsProtocols are the ssl.protocol / ssl.enabledProtocols names Go
// speaks; SSLv3 and TLSv1.0/1.1 are refused as Java 17 disables them.
var tlsProtocols = map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}

// applyTLS handles one ssl.* or ssl.quorum.* key, secureClientPort(Address)
// and sslQuorum; it reports false for keys it does not know.
func (p *configParser) applyTLS(prop properties.Property) (bool, error) {
	v := prop.Trimmed()
	var err error
	switch prop.Key {
	case "secureClientPort":
		p.c.SecureClientPort, err = portProp(prop)
	case "secureClientPortAddress":
		p.c.SecureClientPortAddress, err = hostProp(prop, v)
	case "sslQuorum":
		p.c.SSLQuorum, err = prop.Bool()
	case "portUnification":
		p.c.QuorumPortUnification, err = prop.Bool()
	case "sslQuorumReloadCertFiles":
		p.c.QuorumReloadCertFiles, err = prop.Bool()
	case "X509AuthenticationProvider.superUser", "zookeeper.X509AuthenticationProvider.superUser":
		p.c.X509SuperUser = v
	case "serverCnxnFactory":
		// NIO or Netty: one Go server does both jobs.
	default:
		if rest, ok := strings.CutPrefix(prop.Key, "ssl.quorum."); ok {
			return p.applyStoreKey(&p.c.QuorumTLS, "ssl.quorum.", rest, prop)
		}
		if rest, ok := strings.CutPrefix(prop.Key, "ssl."); ok {
			return p.applyStoreKey(&p.c.TLS, "ssl.", rest, prop)
		}
		return false, nil
	}
	return true, err
}

// applyStoreKey handles the key prefix+key of the TLS configuration t (the
// client port's ssl.* or the quorum's ssl.quorum.*, which X509Util and
// QuorumX509Util read alike); false for keys it does not know.
func (p *configParser) applyStoreKey(t *TLSConfig, prefix, key string, prop properties.Property) (bool, error) {
	v := prop.Trimmed()
	var err error
	switch key {
	case "keyStore.location":
		t.KeyStore = v
	case "keyStore.password":
		t.KeyStorePassword = prop.Value
	case "keyStore.passwordPath":
		t.KeyStorePassword, err = passwordFile(prop)
	case "keyStore.type":
		t.KeyStoreType, err = storeType(prop)
	case "trustStore.location":
		t.TrustStore = v
	case "trustStore.password":
		t.TrustStorePassword = prop.Value
	case "trustStore.passwordPath":
		t.TrustStorePassword, err = passwordFile(prop)
	case "trustStore.type":
		t.TrustStoreType, err = storeType(prop)
	case "clientAuth":
		t.ClientAuth, err = clientAuthProp(prop)
	case "protocol":
		if _, ok := p.set[prefix+"enabledProtocols"]; !ok {
			t.MinVersion, t.MaxVersion, err = protocolsProp(prop)
		}
	case "enabledProtocols":
		t.MinVersion, t.MaxVersion, err = protocolsProp(prop)
	case "ciphersuites":
		t.CipherSuites, err = cipherSuitesProp(prop)
	case "hostnameVerification":
		t.HostnameVerification, err = prop.Bool()
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
	if p.c.SSLQuorum && p.c.QuorumTLS.KeyStore == "" {
		return p.set["sslQuorum"].Bad("needs ssl.quorum.keyStore.location (this server's certificate and key for its peers)")
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
