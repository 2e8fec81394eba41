//go:build compat

package kafkasasl

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/compat-tests/zkserver"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

// checkSecureACLs checks that the znodes the broker made under /kafka
// carry Kafka's secure ACLs for identity: owner (a session with that
// identity) sees all rights to it and read to anyone, and nothing more on
// /config/users; anon (another session) can read the others but change
// none, and cannot read /config/users. And the broker works.
func checkSecureACLs(t *testing.T, e *kafkaenv.Env, anon, owner *zk.Conn, identity zk.ACL) {
	t.Helper()
	produceConsume(t, e.Client(clientOpts...), "acl-topic", 10)
	want := []zk.ACL{identity, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	for _, p := range []string{"/kafka/brokers/ids/0", "/kafka/brokers/topics/acl-topic", "/kafka/controller", "/kafka/cluster/id", "/kafka/config/topics"} {
		acl, _, err := owner.GetACL(p)
		if err != nil || len(acl) != 2 || acl[0] != want[0] || acl[1] != want[1] {
			t.Errorf("%s: ACL %v (%v), want %v", p, acl, err, want)
		}
		if _, _, err := anon.Get(p); err != nil {
			t.Errorf("%s: anyone reads it: %v", p, err)
		}
	}
	if acl, _, err := owner.GetACL("/kafka/config/users"); err != nil || len(acl) != 1 || acl[0] != identity {
		t.Errorf("/kafka/config/users: ACL %v (%v), want %v only", acl, err, identity)
	}
	if _, _, err := anon.Children("/kafka/config/users"); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("another client lists /config/users: %v", err)
	}
	if err := anon.Delete("/kafka/brokers/topics/acl-topic/partitions/0/state", -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("another client deleted a partition state: %v", err)
	}
	if _, err := anon.Set("/kafka/controller_epoch", []byte("99"), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("another client set /controller_epoch: %v", err)
	}
}

// writeJAAS writes a JAAS file and returns its path.
func writeJAAS(t *testing.T, text string) string {
	p := filepath.Join(t.TempDir(), "jaas.conf")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// saslServers are the ZooKeeper servers TestBrokerZooKeeperSASL runs on,
// each given the JAAS file as its users give it (JAVA_TOOL_OPTIONS for
// Apache's JVM, SERVER_JVMFLAGS for zkafka).
var saslServers = map[string]func(testing.TB, zkserver.Options) *zkserver.Server{
	"apache": zkserver.StartApache, "zkafka": zkserver.StartZkafka,
}

// TestBrokerZooKeeperSASL: the broker authenticates to ZooKeeper with SASL
// DIGEST-MD5 (the JAAS Client section) and, with zookeeper.set.acl, its
// znodes are sasl:kafka's; a wrong password stops the broker's start with
// ZooKeeper's refusal.
func TestBrokerZooKeeperSASL(t *testing.T) {
	serverJAAS := writeJAAS(t, `Server {
	org.apache.zookeeper.server.auth.DigestLoginModule required user_kafka="kafka-secret";
};`)
	t.Setenv("JAVA_TOOL_OPTIONS", "-Djava.security.auth.login.config="+serverJAAS) // Apache ZooKeeper's JVM
	t.Setenv("SERVER_JVMFLAGS", "-Djava.security.auth.login.config="+serverJAAS)   // zkServer.sh's, which zkafka reads
	for kind, start := range saslServers {
		t.Run(kind, func(t *testing.T) {
			zks := start(t, zkserver.Options{ExtraConfig: []string{
				"authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"}})
			brokerOnSASL(t, zks.Addr())
		})
	}
}

func brokerOnSASL(t *testing.T, zkAddr string) {
	clientJAAS := writeJAAS(t, `Client {
	org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="kafka-secret";
};`)
	e := kafkaenv.Start(t, kafkaenv.Configure(func(c *broker.Config) {
		c.ZooKeeperConnect = zkAddr + "/kafka"
		c.SASL.JAASFile = clientJAAS
		c.ZooKeeperClient.SetACL = true
	}))
	owner, err := zkmeta.DialSecure(ctx(t), zkAddr, 10*time.Second, slog.New(slog.DiscardHandler),
		zkmeta.Security{SASL: &zkmeta.SASLCredentials{User: "kafka", Password: "kafka-secret", Service: "zookeeper"}})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	checkSecureACLs(t, e, zkserver.Session(t, zkAddr, nil), owner.Conn, zk.ACL{Perms: zk.PermAll, Scheme: "sasl", ID: "kafka"})

	wrong := writeJAAS(t, `Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="guess"; };`)
	cfg := broker.DefaultConfig(t.TempDir())
	cfg.ZooKeeperConnect, cfg.SASL.JAASFile, cfg.ZooKeeperSessionTimeout = zkAddr+"/kafka2", wrong, 6*time.Second
	b, err := broker.New(cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		b.Shutdown(context.Background())
		t.Fatal("a broker with a wrong ZooKeeper password started")
	}
	if !strings.Contains(err.Error(), "SASL authentication failed") || strings.Contains(err.Error(), "guess") {
		t.Fatalf("wrong password: %v", err)
	}
}

// TestBrokerZooKeeperTLS: the broker reaches the secure client port of
// Apache ZooKeeper 3.8 and of zkafka (the same zoo.cfg) with
// zookeeper.ssl.client.enable and a client certificate; with
// zookeeper.set.acl its znodes are its x509 identity's.
func TestBrokerZooKeeperTLS(t *testing.T) {
	pki := keystoretest.NewPKI(t, "zk client CA")
	dir := t.TempDir()
	serverKey := keystoretest.WritePKCS12(t, dir, "server.p12", "secret", pki.Server, pki.CA)
	trust := keystoretest.WritePKCS12Trust(t, dir, "trust.p12", "secret", pki.CA)
	aliceKey := keystoretest.WritePKCS12(t, dir, "alice.p12", "secret", pki.Alice, pki.CA)
	for kind, start := range map[string]func(testing.TB, zkserver.Options) *zkserver.Server{
		"apache": zkserver.StartApache, "zkafka": zkserver.StartZkafka,
	} {
		t.Run(kind, func(t *testing.T) {
			port := zkserver.FreePort(t)
			start(t, zkserver.Options{ApacheClassPath: zkserver.NettyJars, ExtraConfig: []string{
				"secureClientPort=" + strconv.Itoa(port),
				"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
				"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
				"ssl.keyStore.location=" + serverKey, "ssl.keyStore.password=secret", "ssl.keyStore.type=PKCS12",
				"ssl.trustStore.location=" + trust, "ssl.trustStore.password=secret", "ssl.trustStore.type=PKCS12",
				"ssl.clientAuth=need",
			}})
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			e := kafkaenv.Start(t, kafkaenv.Configure(func(c *broker.Config) {
				c.ZooKeeperConnect = addr + "/kafka"
				z := &c.ZooKeeperClient
				z.TLS, z.SetACL = true, true
				z.SSL.KeystoreLocation, z.SSL.KeystorePassword, z.SSL.KeystoreType = aliceKey, "secret", "PKCS12"
				z.SSL.TruststoreLocation, z.SSL.TruststorePassword, z.SSL.TruststoreType = trust, "secret", "PKCS12"
			}))
			as := func(c *keystoretest.Cert) *tls.Config {
				return &tls.Config{RootCAs: pki.Roots, Certificates: []tls.Certificate{{Certificate: [][]byte{c.Cert.Raw}, PrivateKey: c.Key}}}
			}
			checkSecureACLs(t, e, zkserver.Session(t, addr, as(pki.Bob)), zkserver.Session(t, addr, as(pki.Alice)),
				zk.ACL{Perms: zk.PermAll, Scheme: "x509", ID: "CN=alice,O=zkafka"})
		})
	}
}
