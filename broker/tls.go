package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zkafka/zkafka/internal/keystore"
)

// serverTLS builds the tls.Config of an SSL listener from its ssl.* keys:
// the keystore's certificate, the truststore's CAs for client certificates
// (ssl.client.auth), the versions between the lowest of
// ssl.enabled.protocols and the highest allowed by both it and
// ssl.protocol, and ssl.cipher.suites. It is built once, by New, so that a
// bad keystore stops the broker at start rather than at the first
// handshake. key is the unprefixed key to blame.
func (s *SSLConfig) serverTLS() (cfg *tls.Config, key string, err error) {
	cert, key, err := s.keyPair()
	if err != nil {
		return nil, key, err
	}
	cfg = &tls.Config{Certificates: []tls.Certificate{cert}}
	if cfg.ClientCAs, key, err = s.trustPool(); err != nil {
		return nil, key, err
	}
	switch s.ClientAuth {
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	if cfg.ClientAuth != tls.NoClientCert && cfg.ClientCAs == nil {
		return nil, "ssl.client.auth", fmt.Errorf("ssl.client.auth=%s needs ssl.truststore.location or ssl.truststore.certificates", s.ClientAuth)
	}
	if cfg.MinVersion, cfg.MaxVersion, err = s.versions(); err != nil {
		return nil, "ssl.enabled.protocols", err
	}
	if err := s.applyCipherSuites(cfg); err != nil {
		return nil, "ssl.cipher.suites", err
	}
	return cfg, "", nil
}

// keyPair is the keystore's certificate and key: the inline PEM keys
// (ssl.keystore.type=PEM), a PEM file (its key maybe encrypted, for
// ssl.key.password), or a JKS or PKCS12 file.
func (s *SSLConfig) keyPair() (tls.Certificate, string, error) {
	if s.KeystoreKey != "" || s.KeystoreCertificateChain != "" {
		if s.KeystoreType != "PEM" {
			return tls.Certificate{}, "ssl.keystore.type", fmt.Errorf("ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type=PEM, not %s", s.KeystoreType)
		}
		if s.KeystoreLocation != "" {
			return tls.Certificate{}, "ssl.keystore.location", fmt.Errorf("set either ssl.keystore.location or the inline ssl.keystore.key, not both")
		}
		cert, err := keystore.PEMKeyPair([]byte(s.KeystoreCertificateChain), []byte(s.KeystoreKey), s.KeyPassword)
		return cert, "ssl.keystore.key", err
	}
	if s.KeystoreType == "PEM" {
		data, err := os.ReadFile(s.KeystoreLocation)
		if err == nil {
			var cert tls.Certificate
			if cert, err = keystore.PEMKeyPair(data, data, s.KeyPassword); err == nil {
				return cert, "", nil
			}
		}
		return tls.Certificate{}, "ssl.keystore.location", fmt.Errorf("keystore: PEM %s: %w", s.KeystoreLocation, err)
	}
	cert, err := keystore.LoadKeyPair(s.KeystoreLocation, s.keyPassword(), s.KeystoreType)
	if err != nil {
		return cert, "ssl.keystore.location", err
	}
	return cert, "", nil
}

// trustPool is the truststore's CAs (nil when none is set): the inline
// ssl.truststore.certificates, else the file.
func (s *SSLConfig) trustPool() (*x509.CertPool, string, error) {
	if s.TruststoreCertificates != "" {
		if s.TruststoreType != "PEM" {
			return nil, "ssl.truststore.type", fmt.Errorf("ssl.truststore.certificates needs ssl.truststore.type=PEM, not %s", s.TruststoreType)
		}
		pool, err := keystore.PEMTrustPool([]byte(s.TruststoreCertificates))
		return pool, "ssl.truststore.certificates", err
	}
	if s.TruststoreLocation == "" {
		return nil, "", nil
	}
	pool, err := keystore.LoadTrustPool(s.TruststoreLocation, s.TruststorePassword, s.TruststoreType)
	return pool, "ssl.truststore.location", err
}

// keyPassword: Kafka takes ssl.key.password, or the keystore's password
// when it is not set; a PKCS12 file has one password for both.
func (s *SSLConfig) keyPassword() string {
	if s.KeystoreType == "PKCS12" || s.KeyPassword == "" {
		return s.KeystorePassword
	}
	return s.KeyPassword
}

// versions is the range of TLS versions offered.
func (s *SSLConfig) versions() (lo, hi uint16, err error) {
	var vs []uint16
	for _, p := range s.EnabledProtocols {
		vs = append(vs, tlsVersions[p])
	}
	if top, ok := tlsVersions[s.Protocol]; ok {
		vs = slices.DeleteFunc(vs, func(v uint16) bool { return v > top })
	}
	if len(vs) == 0 {
		return 0, 0, fmt.Errorf("ssl.enabled.protocols %v: none is allowed by ssl.protocol=%s", s.EnabledProtocols, s.Protocol)
	}
	return slices.Min(vs), slices.Max(vs), nil
}

// initTLS builds b.tlsCfgs, the tls.Config of each SSL and SASL_SSL
// listener from its own ssl.* keys (sslFor). An error names the key to
// blame, listener-prefixed when the listener's own key is.
func (b *Broker) initTLS() error {
	ls, err := b.cfg.listenerEntries(b.cfg.Listeners)
	if err != nil {
		return err
	}
	for _, e := range ls {
		if !isTLSProtocol(e.protocol) {
			continue
		}
		s, key, err := b.cfg.sslFor(e.name)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		cfg, key, err := s.serverTLS()
		if err != nil {
			if _, own := b.cfg.ListenerSSL[e.name][key]; own {
				key = listenerSSLPrefix + strings.ToLower(e.name) + "." + key
			}
			return fmt.Errorf("listener %s: %s: %w", e.name, key, err)
		}
		if b.tlsCfgs == nil {
			b.tlsCfgs = map[string]*tls.Config{}
		}
		b.tlsCfgs[e.name] = cfg
	}
	return nil
}

// tlsHandshakeTimeout bounds a TLS handshake: a client that connects and
// never finishes it (or sends nothing) is closed then, not held open.
var tlsHandshakeTimeout = 10 * time.Second

// handshake runs the TLS handshake of an SSL listener's connection under
// tlsHandshakeTimeout (Shutdown's read deadline ends it too). A failure
// closes the connection with a log line naming the remote address.
func (c *conn) handshake() bool {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.log.Info("TLS handshake failed; closing the connection", "err", err)
		c.nc.Close()
		return false
	}
	if !c.setTLSPrincipal(tc.ConnectionState()) {
		c.nc.Close()
		return false
	}
	return true
}

// interBrokerTLS is the client side of the inter-broker listener, for
// this broker's clients of other brokers: that listener's certificate
// (for ssl.client.auth), truststore CAs, versions and cipher suites (nil
// when it is not SSL or SASL_SSL).
func (b *Broker) interBrokerTLS() *tls.Config {
	srv := b.tlsCfgs[b.cfg.interBrokerListener()]
	if srv == nil {
		return nil
	}
	return &tls.Config{Certificates: srv.Certificates, RootCAs: srv.ClientCAs,
		MinVersion: srv.MinVersion, MaxVersion: srv.MaxVersion, CipherSuites: srv.CipherSuites}
}
