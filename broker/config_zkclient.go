package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/internal/jaas"
	"github.com/zkafka/zkafka/internal/keystore"
	"github.com/zkafka/zkafka/internal/properties"
)

// ZooKeeperClientConfig secures the broker's ZooKeeper session, with
// Kafka's keys (KIP-515) and the JVM system properties of KAFKA_OPTS that
// Kafka's ZooKeeper client reads (the keys win):
//
//   - zookeeper.set.acl: the znodes the broker creates get Kafka's secure
//     ACLs (zkmeta.Security.SecureACLs), which needs an authenticated
//     session (SASL, or TLS with a client certificate), as Kafka checks.
//   - zookeeper.ssl.client.enable (-Dzookeeper.client.secure): TLS, with
//     zookeeper.ssl.keystore.* (the client certificate; PEM, PKCS12, JKS),
//     zookeeper.ssl.truststore.*, zookeeper.ssl.protocol (TLSv1.2),
//     zookeeper.ssl.enabled.protocols and
//     zookeeper.ssl.endpoint.identification.algorithm (HTTPS: the host
//     name is checked; empty: it is not). The -Dzookeeper.ssl.keyStore.*
//     and trustStore.* properties are read too. zookeeper.ssl.cipher.suites
//     is accepted and ignored (Go's suites); zookeeper.ssl.crl.enable and
//     ocsp.enable must be false.
//   - SASL DIGEST-MD5 when the JAAS file (SASLConfig.JAASFile) has the
//     section -Dzookeeper.sasl.clientconfig names (Client), with its
//     username and password, unless -Dzookeeper.sasl.client=false; the
//     server's service is -Dzookeeper.sasl.client.username (zookeeper).
type ZooKeeperClientConfig struct {
	SetACL bool      // zookeeper.set.acl
	TLS    bool      // zookeeper.ssl.client.enable
	SSL    SSLConfig // zookeeper.ssl.* (the names of ssl.* after "zookeeper.")
	// HostnameVerification is zookeeper.ssl.endpoint.identification.algorithm=HTTPS.
	HostnameVerification bool

	SASLClient  bool   // -Dzookeeper.sasl.client (true)
	SASLSection string // -Dzookeeper.sasl.clientconfig (Client)
	SASLService string // -Dzookeeper.sasl.client.username (zookeeper)
}

// DefaultZooKeeperClientConfig has Kafka's defaults.
func DefaultZooKeeperClientConfig() ZooKeeperClientConfig {
	return ZooKeeperClientConfig{SSL: SSLConfig{Protocol: "TLSv1.2"}, HostnameVerification: true,
		SASLClient: true, SASLSection: "Client", SASLService: "zookeeper"}
}

// parseProperty reads one zookeeper.set.acl or zookeeper.ssl.* key; ok is
// false for keys it does not own (the other zookeeper.ssl.* keys stay
// accepted and ignored).
func (z *ZooKeeperClientConfig) parseProperty(p properties.Property) (ok bool, err error) {
	k, v := p.Key, p.Trimmed()
	switch k {
	case "zookeeper.set.acl":
		z.SetACL, err = p.Bool()
		return true, err
	case "zookeeper.ssl.client.enable":
		z.TLS, err = p.Bool()
		return true, err
	case "zookeeper.ssl.endpoint.identification.algorithm":
		if v != "" && !strings.EqualFold(v, "HTTPS") {
			return true, errors.New("must be HTTPS or empty")
		}
		z.HostnameVerification = v != ""
		return true, nil
	case "zookeeper.ssl.crl.enable", "zookeeper.ssl.ocsp.enable":
		on, err := p.Bool()
		if err == nil && on {
			err = errors.New("certificate revocation checks are not offered by zkafka: must be false")
		}
		return true, err
	case "zookeeper.ssl.client.auth", "zookeeper.ssl.key.password":
		return false, nil // not Kafka's ZooKeeper client keys
	}
	if rest, ok := strings.CutPrefix(k, "zookeeper."); ok && strings.HasPrefix(rest, "ssl.") {
		return z.SSL.parseProperty(rest, v)
	}
	return false, nil
}

// jvmProperties are the -D names of the ZooKeeper client's system
// properties and the key each stands for.
var jvmProperties = map[string]string{
	"zookeeper.client.secure":         "zookeeper.ssl.client.enable",
	"zookeeper.ssl.keyStore.location": "zookeeper.ssl.keystore.location", "zookeeper.ssl.keyStore.password": "zookeeper.ssl.keystore.password",
	"zookeeper.ssl.keyStore.type": "zookeeper.ssl.keystore.type", "zookeeper.ssl.trustStore.location": "zookeeper.ssl.truststore.location",
	"zookeeper.ssl.trustStore.password": "zookeeper.ssl.truststore.password", "zookeeper.ssl.trustStore.type": "zookeeper.ssl.truststore.type",
	"zookeeper.ssl.protocol": "zookeeper.ssl.protocol", "zookeeper.ssl.enabledProtocols": "zookeeper.ssl.enabled.protocols",
	"zookeeper.ssl.hostnameVerification": "",
}

// applyKafkaOpts takes the JVM system properties of KAFKA_OPTS that the
// broker reads: the JAAS file and the ZooKeeper client's. An error names
// the property.
func (c *Config) applyKafkaOpts(opts string) error {
	if v, ok := jaas.JVMProperty(jaasFileProperty, opts); ok {
		c.SASL.JAASFile = v
	}
	z := &c.ZooKeeperClient
	if v, ok := jaas.JVMProperty("zookeeper.sasl.client", opts); ok {
		z.SASLClient = !strings.EqualFold(v, "false")
	}
	if v, ok := jaas.JVMProperty("zookeeper.sasl.clientconfig", opts); ok && v != "" {
		z.SASLSection = v
	}
	if v, ok := jaas.JVMProperty("zookeeper.sasl.client.username", opts); ok && v != "" {
		z.SASLService = v
	}
	for prop, key := range jvmProperties {
		v, ok := jaas.JVMProperty(prop, opts)
		if !ok {
			continue
		}
		var err error
		if key == "" { // hostnameVerification
			z.HostnameVerification, err = strconv.ParseBool(v)
		} else {
			_, err = z.parseProperty(properties.Property{Key: key, Value: v})
		}
		if err != nil {
			return &properties.Error{Key: "-D" + prop, Value: v, Allowed: err.Error() + " (KAFKA_OPTS)"}
		}
	}
	return nil
}

// zkSecurity is the zkmeta.Security of the session. The error names the
// key to blame.
func (c *Config) zkSecurity() (zkmeta.Security, error) {
	z := &c.ZooKeeperClient
	sec := zkmeta.Security{SecureACLs: z.SetACL}
	if z.TLS {
		tc, err := z.clientTLS()
		if err != nil {
			return sec, err
		}
		sec.TLS = tc
	}
	creds, err := c.zkSASLCredentials()
	if err != nil {
		return sec, err
	}
	sec.SASL = creds
	if z.SetACL && sec.SASL == nil && (sec.TLS == nil || len(sec.TLS.Certificates) == 0) {
		return sec, &properties.Error{Key: "zookeeper.set.acl", Value: "true", Allowed: "the ZooKeeper session must authenticate: " +
			"a JAAS file with a " + z.SASLSection + " section (-D" + jaasFileProperty + " in KAFKA_OPTS), " +
			"or zookeeper.ssl.client.enable=true with zookeeper.ssl.keystore.location (as Kafka requires)"}
	}
	return sec, nil
}

// zkSASLCredentials are the JAAS Client section's user, nil without SASL.
func (c *Config) zkSASLCredentials() (*zkmeta.SASLCredentials, error) {
	z := &c.ZooKeeperClient
	if !z.SASLClient || c.SASL.JAASFile == "" {
		return nil, nil
	}
	f, err := jaas.Load(c.SASL.JAASFile)
	if err != nil {
		return nil, &properties.Error{Key: jaasFileProperty, Value: c.SASL.JAASFile, Allowed: jaasFileError(c.SASL.JAASFile, err)}
	}
	entries := f[z.SASLSection]
	if entries == nil {
		return nil, nil // ZooKeeper's client: no section, no SASL
	}
	for _, e := range entries {
		user, uok := e.Options["username"]
		pass, pok := e.Options["password"]
		if uok && pok {
			return &zkmeta.SASLCredentials{User: user, Password: pass, Service: z.SASLService}, nil
		}
	}
	return nil, &properties.Error{Key: jaasFileProperty, Value: c.SASL.JAASFile,
		Allowed: fmt.Sprintf("section %s has no login module with username and password", z.SASLSection)}
}

// clientTLS is the tls.Config of the ZooKeeper connections.
func (z *ZooKeeperClientConfig) clientTLS() (*tls.Config, error) {
	s := &z.SSL
	cfg := &tls.Config{}
	if s.KeystoreLocation != "" {
		cert, err := keystore.LoadKeyPair(s.KeystoreLocation, s.KeystorePassword, s.KeystoreType)
		if err != nil {
			return nil, &properties.Error{Key: "zookeeper.ssl.keystore.location", Value: s.KeystoreLocation, Allowed: err.Error()}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if s.TruststoreLocation != "" {
		pool, err := keystore.LoadTrustPool(s.TruststoreLocation, s.TruststorePassword, s.TruststoreType)
		if err != nil {
			return nil, &properties.Error{Key: "zookeeper.ssl.truststore.location", Value: s.TruststoreLocation, Allowed: err.Error()}
		}
		cfg.RootCAs = pool
	}
	enabled := *s
	if len(enabled.EnabledProtocols) == 0 {
		enabled.EnabledProtocols = []string{s.Protocol}
	}
	var err error
	if cfg.MinVersion, cfg.MaxVersion, err = enabled.versions(); err != nil {
		return nil, &properties.Error{Key: "zookeeper.ssl.enabled.protocols", Value: strings.Join(enabled.EnabledProtocols, ","), Allowed: err.Error()}
	}
	if err := s.applyCipherSuites(cfg); err != nil {
		return nil, &properties.Error{Key: "zookeeper.ssl.cipher.suites", Value: strings.Join(s.CipherSuites, ","), Allowed: err.Error()}
	}
	if !z.HostnameVerification {
		// The chain is checked, not the name (Go checks both or neither).
		keystore.CheckChainOnly(cfg, cfg.RootCAs, "the ZooKeeper server")
	}
	return cfg, nil
}
