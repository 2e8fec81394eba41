package broker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
	"github.com/zkafka/zkafka/internal/properties"
)

// TestZooKeeperClientKeys: zookeeper.set.acl, zookeeper.ssl.* and the
// KAFKA_OPTS properties of Kafka's ZooKeeper client; bad values and
// zookeeper.set.acl without an authenticated session are one-line errors
// naming the key.
func TestZooKeeperClientKeys(t *testing.T) {
	dir := t.TempDir()
	p := keystoretest.NewPKI(t, "zk client keys CA")
	key := keystoretest.WritePKCS12(t, dir, "client.p12", "pw", p.Alice, p.CA)
	trust := keystoretest.WriteCertPEM(t, dir, "ca.pem", p.CA)
	jaasFile := filepath.Join(dir, "jaas.conf")
	os.WriteFile(jaasFile, []byte(`Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="zk-pw"; };
ZkOther { org.apache.zookeeper.server.auth.DigestLoginModule required username="other"; };`), 0o600)
	tlsKeys := "zookeeper.ssl.client.enable=true\nzookeeper.ssl.keystore.location=" + key + "\nzookeeper.ssl.keystore.password=pw\nzookeeper.ssl.keystore.type=PKCS12\nzookeeper.ssl.truststore.location=" + trust + "\nzookeeper.ssl.truststore.type=PEM\n"
	for _, tc := range []struct {
		name, props, opts, bad string
		check                  func(c Config) bool
	}{
		{"TLS keys", tlsKeys + "zookeeper.set.acl=true", "", "", func(c Config) bool {
			sec, err := c.zkSecurity()
			return err == nil && sec.SecureACLs && sec.TLS != nil && len(sec.TLS.Certificates) == 1 && sec.SASL == nil && sec.TLS.MaxVersion == 0x0303
		}},
		{"TLS from KAFKA_OPTS", "", "-Dzookeeper.client.secure=true -Dzookeeper.ssl.keyStore.location=" + key + " -Dzookeeper.ssl.keyStore.password=pw", "", func(c Config) bool {
			return c.ZooKeeperClient.TLS && c.ZooKeeperClient.SSL.KeystoreLocation == key
		}},
		{"keys win over KAFKA_OPTS", "zookeeper.ssl.client.enable=false", "-Dzookeeper.client.secure=true", "", func(c Config) bool {
			return !c.ZooKeeperClient.TLS
		}},
		{"SASL from the Client section", "zookeeper.set.acl=true", "-Djava.security.auth.login.config=" + jaasFile, "", func(c Config) bool {
			sec, err := c.zkSecurity()
			return err == nil && sec.SASL != nil && sec.SASL.User == "kafka" && sec.SASL.Password == "zk-pw" && sec.SASL.Service == "zookeeper"
		}},
		{"zookeeper.sasl.client=false", "", "-Djava.security.auth.login.config=" + jaasFile + " -Dzookeeper.sasl.client=false", "", func(c Config) bool {
			sec, err := c.zkSecurity()
			return err == nil && sec.SASL == nil
		}},
		{"another section without a password", "", "-Djava.security.auth.login.config=" + jaasFile + " -Dzookeeper.sasl.clientconfig=ZkOther", jaasFileProperty, nil},
		{"set.acl without authentication", "zookeeper.set.acl=true", "", "zookeeper.set.acl", nil},
		{"set.acl with TLS but no certificate", "zookeeper.set.acl=true\nzookeeper.ssl.client.enable=true", "", "zookeeper.set.acl", nil},
		{"bad set.acl", "zookeeper.set.acl=yes", "", "zookeeper.set.acl", nil},
		{"bad endpoint identification", "zookeeper.ssl.endpoint.identification.algorithm=DNS", "", "zookeeper.ssl.endpoint.identification.algorithm", nil},
		{"no hostname verification", "zookeeper.ssl.endpoint.identification.algorithm=", "", "", func(c Config) bool { return !c.ZooKeeperClient.HostnameVerification }},
		{"bad protocol", "zookeeper.ssl.protocol=SSLv3", "", "zookeeper.ssl.protocol", nil},
		{"missing keystore", "zookeeper.ssl.client.enable=true\nzookeeper.ssl.keystore.location=/nope.p12", "", "zookeeper.ssl.keystore.location", nil},
		{"CRL checks", "zookeeper.ssl.crl.enable=true", "", "zookeeper.ssl.crl.enable", nil},
		{"no OCSP", "zookeeper.ssl.ocsp.enable=false", "", "", func(c Config) bool { return true }},
		{"bad -D value", "", "-Dzookeeper.client.secure=maybe", "-Dzookeeper.client.secure", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseProperties(strings.NewReader(tc.props), nil, tc.opts)
			var e *properties.Error
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("%v", err)
			case tc.bad == "" && !tc.check(c):
				t.Fatalf("parsed %+v", c.ZooKeeperClient)
			case tc.bad != "" && (!errors.As(err, &e) || e.Key != tc.bad):
				t.Fatalf("err %v, want one naming %s", err, tc.bad)
			case err != nil && (strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "zk-pw")):
				t.Fatalf("error %q: several lines, or a password", err)
			}
		})
	}
}
