package broker

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// SSLConfig is the broker's ssl.* keys, as Kafka's SslConfigs has them:
// the keystore holding the broker's certificate and key, the truststore
// holding the CAs client certificates are checked against, and the
// handshake's rules. It applies to every SSL and SASL_SSL listener, each
// key overridden for listener X by listener.name.x.ssl.* (Config.ListenerSSL,
// Kafka's ListenerName prefix).
type SSLConfig struct {
	KeystoreLocation string // ssl.keystore.location
	KeystorePassword string // ssl.keystore.password
	// KeyPassword is ssl.key.password: a JKS key's password, or what
	// decrypts an encrypted PKCS#8 PEM key.
	KeyPassword  string
	KeystoreType string // ssl.keystore.type: JKS (Kafka's default), PKCS12 or PEM
	// KeystoreCertificateChain and KeystoreKey are the PEM text of
	// ssl.keystore.certificate.chain and ssl.keystore.key (type PEM, no
	// location), as Kafka 2.7 and later take them inline.
	KeystoreCertificateChain string
	KeystoreKey              string
	TruststoreLocation       string // ssl.truststore.location
	TruststorePassword       string // ssl.truststore.password
	TruststoreType           string // ssl.truststore.type: JKS, PKCS12 or PEM
	// TruststoreCertificates is ssl.truststore.certificates, PEM text.
	TruststoreCertificates string
	// CipherSuites is ssl.cipher.suites, Java/IANA names (nil: Go's
	// defaults); cipherSuites (tls_ciphers.go) maps them.
	CipherSuites []string
	// ClientAuth is ssl.client.auth: none (default), requested or required.
	ClientAuth string
	// EnabledProtocols is ssl.enabled.protocols (TLSv1.2,TLSv1.3).
	EnabledProtocols []string
	// Protocol is ssl.protocol (TLSv1.3): the highest version offered.
	Protocol string
}

// DefaultSSLConfig has Kafka's defaults.
func DefaultSSLConfig() SSLConfig {
	return SSLConfig{KeystoreType: "JKS", TruststoreType: "JKS", ClientAuth: "none",
		EnabledProtocols: []string{"TLSv1.2", "TLSv1.3"}, Protocol: "TLSv1.3"}
}

// tlsVersions are the protocol names Java and Kafka use.
var tlsVersions = map[string]uint16{
	"TLSv1": tls.VersionTLS10, "TLSv1.1": tls.VersionTLS11, "TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13,
}

// parseProperty reads one ssl.* key; ok is false for keys it does not own
// (the other ssl.* keys stay accepted and ignored).
func (s *SSLConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "ssl.keystore.location":
		s.KeystoreLocation = v
	case "ssl.keystore.password":
		s.KeystorePassword = v
	case "ssl.key.password":
		s.KeyPassword = v
	case "ssl.keystore.certificate.chain":
		s.KeystoreCertificateChain = v
	case "ssl.keystore.key":
		s.KeystoreKey = v
	case "ssl.truststore.certificates":
		s.TruststoreCertificates = v
	case "ssl.cipher.suites":
		s.CipherSuites = splitList(v)
		_, _, err = cipherSuites(s.CipherSuites)
	case "ssl.truststore.location":
		s.TruststoreLocation = v
	case "ssl.truststore.password":
		s.TruststorePassword = v
	case "ssl.keystore.type":
		s.KeystoreType, err = storeType(v)
	case "ssl.truststore.type":
		s.TruststoreType, err = storeType(v)
	case "ssl.client.auth":
		if v != "none" && v != "requested" && v != "required" {
			return true, fmt.Errorf("must be one of none, requested, required")
		}
		s.ClientAuth = v
	case "ssl.enabled.protocols":
		s.EnabledProtocols = splitList(v)
		for _, p := range s.EnabledProtocols {
			if _, known := tlsVersions[p]; !known {
				return true, fmt.Errorf("%q is not a protocol zkafka offers (TLSv1, TLSv1.1, TLSv1.2, TLSv1.3)", p)
			}
		}
		if len(s.EnabledProtocols) == 0 {
			return true, fmt.Errorf("must list at least one of TLSv1.2, TLSv1.3")
		}
	case "ssl.protocol":
		if _, known := tlsVersions[v]; !known && v != "TLS" {
			return true, fmt.Errorf("must be TLS, TLSv1.2 or TLSv1.3 (or TLSv1, TLSv1.1)")
		}
		s.Protocol = v
	default:
		return false, nil
	}
	return true, err
}

// storeType checks a keystore or truststore type; Java's KeyStore types
// are case-insensitive.
func storeType(v string) (string, error) {
	switch t := strings.ToUpper(v); t {
	case "JKS", "PKCS12", "PEM":
		return t, nil
	}
	return "", fmt.Errorf("must be JKS, PKCS12 or PEM")
}

// defaultProtocolMap is listener.security.protocol.map's default: each
// security protocol as a listener name of its own.
var defaultProtocolMap = map[string]string{
	"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL",
}

// protocolMapProp parses listener.security.protocol.map, NAME:PROTOCOL,...
func protocolMapProp(v string) (map[string]string, error) {
	m := map[string]string{}
	for _, e := range splitList(v) {
		name, proto, ok := strings.Cut(e, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(proto))
		if _, known := defaultProtocolMap[proto]; !ok || name == "" || !known {
			return nil, fmt.Errorf("%q: want NAME:PROTOCOL with PROTOCOL one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", e)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("listener %s is given twice", name)
		}
		m[name] = proto
	}
	return m, nil
}

// isTLSProtocol: the listener's connections are TLS (SSL, SASL_SSL).
func isTLSProtocol(p string) bool { return p == "SSL" || p == "SASL_SSL" }

// isSASLProtocol: the listener's clients authenticate with SASL.
func isSASLProtocol(p string) bool { return p == "SASL_PLAINTEXT" || p == "SASL_SSL" }

// listenerEntry is one parsed listener.
type listenerEntry struct {
	name, protocol, addr string
}

// listenerProtocol is the security protocol of listener name.
func (c *Config) listenerProtocol(name string) (string, error) {
	m := c.ListenerProtocols
	if m == nil {
		m = defaultProtocolMap
	}
	p, ok := m[name]
	switch {
	case !ok:
		return "", fmt.Errorf("no security protocol defined for listener %s (listener.security.protocol.map)", name)
	}
	return p, nil
}

// listenerEntries parses list (listeners or advertised.listeners) with
// their security protocols.
func (c *Config) listenerEntries(list []string) ([]listenerEntry, error) {
	out := make([]listenerEntry, 0, len(list))
	for _, l := range list {
		name, addr, err := parseListener(l)
		if err != nil {
			return nil, err
		}
		proto, err := c.listenerProtocol(name)
		if err != nil {
			return nil, err
		}
		out = append(out, listenerEntry{name: name, protocol: proto, addr: addr})
	}
	return out, nil
}

// checkListeners checks what needs several keys: every listener has a
// protocol zkafka serves, advertised listeners are among the listeners
// (Kafka's rule), and SSL listeners have a keystore. The error names the
// key to blame.
func (c *Config) checkListeners() (key string, err error) {
	ls, err := c.listenerEntries(c.Listeners)
	if err != nil {
		return "listeners", err
	}
	names := map[string]bool{}
	for _, l := range ls {
		names[l.name] = true
		if isTLSProtocol(l.protocol) {
			s, key, err := c.sslFor(l.name)
			if err != nil {
				return key, err
			}
			if s.KeystoreLocation == "" && s.KeystoreKey == "" {
				return "listeners", fmt.Errorf("listener %s is %s: ssl.keystore.location (or ssl.keystore.key with ssl.keystore.type=PEM) must be set", l.name, l.protocol)
			}
		}
		if isSASLProtocol(l.protocol) {
			if err := c.checkSASLListener(l.name); err != nil {
				return "", err
			}
		}
	}
	if _, err := c.interBrokerSASL(); err != nil {
		return "", err
	}
	for _, a := range c.AdvertisedListeners {
		name, _, err := parseListener(a)
		if err != nil {
			return "advertised.listeners", err
		}
		if !names[name] {
			return "advertised.listeners", fmt.Errorf("listener %s is not in listeners: the advertised listener names must be among those of listeners", name)
		}
	}
	return "", nil
}
