package broker

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"time"

	"github.com/zkafka/zkafka/internal/keystore"
)

// serverTLS builds the tls.Config of the SSL listeners from ssl.*: the
// keystore's certificate, the truststore's CAs for client certificates
// (ssl.client.auth), and the versions between the lowest of
// ssl.enabled.protocols and the highest allowed by both it and
// ssl.protocol. It is built once, by New, so that a bad keystore stops the
// broker at start rather than at the first handshake.
func (s *SSLConfig) serverTLS() (*tls.Config, error) {
	cert, err := keystore.LoadKeyPair(s.KeystoreLocation, s.keyPassword(), s.KeystoreType)
	if err != nil {
		return nil, fmt.Errorf("ssl.keystore.location: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if s.TruststoreLocation != "" {
		if cfg.ClientCAs, err = keystore.LoadTrustPool(s.TruststoreLocation, s.TruststorePassword, s.TruststoreType); err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
	}
	switch s.ClientAuth {
	case "required":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case "requested":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	if cfg.ClientAuth != tls.NoClientCert && cfg.ClientCAs == nil {
		return nil, fmt.Errorf("ssl.client.auth=%s needs ssl.truststore.location", s.ClientAuth)
	}
	cfg.MinVersion, cfg.MaxVersion, err = s.versions()
	return cfg, err
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

// initTLS builds b.tlsCfg when a listener is SSL.
func (b *Broker) initTLS() error {
	ls, err := b.cfg.listenerEntries(b.cfg.Listeners)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(ls, func(e listenerEntry) bool { return e.protocol == "SSL" }) {
		return nil
	}
	b.tlsCfg, err = b.cfg.SSL.serverTLS()
	return err
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
	return true
}

// interBrokerTLS is the client side of the SSL listeners, for the
// controller's requests to other brokers: this broker's certificate
// (for ssl.client.auth) and the truststore's CAs (nil without SSL).
func (b *Broker) interBrokerTLS() *tls.Config {
	if b.tlsCfg == nil {
		return nil
	}
	return &tls.Config{Certificates: b.tlsCfg.Certificates, RootCAs: b.tlsCfg.ClientCAs,
		MinVersion: b.tlsCfg.MinVersion, MaxVersion: b.tlsCfg.MaxVersion}
}
