package broker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/properties"
)

const plainJAASValue = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

// The inter-broker SASL cases: a SASL_PLAINTEXT inter-broker listener
// offering SCRAM-SHA-512.
const (
	interSCRAM     = "listeners=INTERNAL://:9093\nlistener.security.protocol.map=INTERNAL:SASL_PLAINTEXT\ninter.broker.listener.name=INTERNAL\nsasl.enabled.mechanisms=SCRAM-SHA-512"
	interMechKey   = "sasl.mechanism.inter.broker.protocol"
	scramJAASValue = `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";`
)

// saslCases are server.properties texts for the SASL keys; bad names the
// key the one-line error must name ("" = good).
var saslCases = []struct {
	props string
	bad   string
	check func(c Config) bool
}{
	{"listeners=PLAINTEXT://:9093,SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=SCRAM-SHA-512", "", func(c Config) bool {
		return c.SASL.mechanismsOf("SASL_PLAINTEXT")[0] == "SCRAM-SHA-512"
	}},
	{"listeners=SASL_PLAINTEXT://:9092", "sasl.enabled.mechanisms", nil}, // Kafka's default, GSSAPI
	{"listeners=SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=PLAIN,OAUTHBEARER", "sasl.enabled.mechanisms", nil},
	{"listeners=SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config", nil},
	{"listeners=PLAINTEXT://:9093,SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=PLAIN\nlistener.name.sasl_plaintext.plain.sasl.jaas.config=" + plainJAASValue, "", func(c Config) bool {
		u, err := c.SASL.plainUsers("SASL_PLAINTEXT")
		return err == nil && len(u) == 2 && u["alice"] == "alice-secret"
	}},
	{"listeners=PLAINTEXT://:9093,CLIENT://:9092\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT,CLIENT:SASL_PLAINTEXT\nlistener.name.client.sasl.enabled.mechanisms=SCRAM-SHA-256", "", func(c Config) bool {
		return c.SASL.mechanismsOf("CLIENT")[0] == "SCRAM-SHA-256"
	}},
	{"listeners=CLIENT://:9092\nlistener.security.protocol.map=CLIENT:SASL_PLAINTEXT\nlistener.name.client.sasl.enabled.mechanisms=GSSAPI", "listener.name.client.sasl.enabled.mechanisms", nil},
	{"listeners=SASL_SSL://:9092\nsasl.enabled.mechanisms=SCRAM-SHA-256", "listeners", nil}, // no keystore
	{"listener.name.sasl_plaintext.plain.sasl.jaas.config=PlainLoginModule maybe user_a=\"hunter2\";", "listener.name.sasl_plaintext.plain.sasl.jaas.config", nil},
	// Inter-broker SASL (interbroker_sasl.go).
	{interSCRAM, interMechKey, nil}, // Kafka's default, GSSAPI
	{interSCRAM + "\nsasl.mechanism.inter.broker.protocol=SCRAM-SHA-256", interMechKey, nil}, // not enabled
	{interSCRAM + "\nsasl.mechanism.inter.broker.protocol=SCRAM-SHA-512", "listener.name.internal.scram-sha-512.sasl.jaas.config", nil},
	{interSCRAM + "\nsasl.mechanism.inter.broker.protocol=SCRAM-SHA-512\nlistener.name.internal.scram-sha-512.sasl.jaas.config=" + plainJAASValue,
		"listener.name.internal.scram-sha-512.sasl.jaas.config", nil}, // not the SCRAM login module
	{interSCRAM + "\nsasl.mechanism.inter.broker.protocol=SCRAM-SHA-512\nlistener.name.internal.scram-sha-512.sasl.jaas.config=" + scramJAASValue, "", func(c Config) bool {
		m, err := c.interBrokerSASL()
		return err == nil && m != nil && m.Name() == "SCRAM-SHA-512"
	}},
	{"listeners=INTERNAL://:9093\nlistener.security.protocol.map=INTERNAL:SASL_PLAINTEXT\ninter.broker.listener.name=INTERNAL\nsasl.enabled.mechanisms=PLAIN\nsasl.mechanism.inter.broker.protocol=PLAIN\nlistener.name.internal.plain.sasl.jaas.config=" + plainJAASValue, "", func(c Config) bool {
		m, err := c.interBrokerSASL()
		return err == nil && m != nil && m.Name() == "PLAIN"
	}},
	{"listeners=PLAINTEXT://:9093,SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=PLAIN\nlistener.name.sasl_plaintext.plain.sasl.jaas.config=" + plainJAASValue, "", func(c Config) bool {
		m, err := c.interBrokerSASL() // the inter-broker listener is PLAINTEXT
		return err == nil && m == nil
	}},
	{"connections.max.reauth.ms=60000\nconnection.failed.authentication.delay.ms=250", "", func(c Config) bool {
		return c.SASL.ReauthMax == time.Minute && c.SASL.FailedAuthDelay == 250*time.Millisecond
	}},
	{"listener.name.x.scram-sha-256.connections.max.reauth.ms=5000", "", func(c Config) bool {
		return c.SASL.reauthOf("X", "SCRAM-SHA-256") == 5*time.Second && c.SASL.reauthOf("X", "PLAIN") == 0
	}},
	{"connections.max.reauth.ms=-1", "connections.max.reauth.ms", nil},
	{"connection.failed.authentication.delay.ms=x", "connection.failed.authentication.delay.ms", nil},
	{"sasl.server.max.receive.size=0", "sasl.server.max.receive.size", nil},
	{"sasl.jaas.config=" + plainJAASValue, "", func(c Config) bool { return c.SASL.Listeners == nil }}, // ignored, as Kafka
}

func TestParsePropertiesSASL(t *testing.T) {
	for _, tc := range saslCases {
		c, err := ParseProperties(strings.NewReader(tc.props), nil)
		var e *properties.Error
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%q: %v", tc.props, err)
		case tc.bad == "" && !tc.check(c):
			t.Errorf("%q: parsed %+v", tc.props, c.SASL)
		case tc.bad != "" && (!errors.As(err, &e) || e.Key != tc.bad):
			t.Errorf("%q: err %v, want one naming %s", tc.props, err, tc.bad)
		case tc.bad != "" && strings.ContainsAny(err.Error(), "\n"):
			t.Errorf("%q: error on several lines: %q", tc.props, err)
		case err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "hunter2")):
			t.Errorf("%q: the error shows a password: %v", tc.props, err)
		}
	}
}

// TestJAASFileFromKafkaOpts: the PLAIN users of a listener come from the
// JAAS file KAFKA_OPTS names, its listener's section first.
func TestJAASFileFromKafkaOpts(t *testing.T) {
	dir := t.TempDir()
	jaasFile := filepath.Join(dir, "kafka_server_jaas.conf")
	os.WriteFile(jaasFile, []byte(`KafkaServer {
	org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="a" user_admin="a";
};
sasl_ssl.KafkaServer {
	org.apache.kafka.common.security.plain.PlainLoginModule required user_tls="t";
};`), 0o600)
	props := filepath.Join(dir, "server.properties")
	os.WriteFile(props, []byte("listeners=SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=PLAIN\nsasl.mechanism.inter.broker.protocol=PLAIN\nlog.dirs="+dir+"\n"), 0o600)
	t.Setenv("KAFKA_OPTS", "-Xmx1G -Djava.security.auth.login.config="+jaasFile)
	c, err := LoadConfig(props, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := c.SASL.plainUsers("SASL_PLAINTEXT"); err != nil || len(u) != 1 || u["admin"] != "a" {
		t.Fatalf("KafkaServer users: %v %v", u, err)
	}
	if m, err := c.interBrokerSASL(); err != nil || m == nil || m.Name() != "PLAIN" {
		t.Fatalf("inter-broker login from the KafkaServer section: %v %v", m, err)
	}
	if u, err := c.SASL.plainUsers("SASL_SSL"); err != nil || len(u) != 1 || u["tls"] != "t" {
		t.Fatalf("sasl_ssl.KafkaServer users: %v %v", u, err)
	}
	os.WriteFile(jaasFile, []byte("KafkaServer {\n  m required user_admin=\"s3cret\" oops s3cret;\n};"), 0o600)
	_, err = LoadConfig(props, nil)
	if err == nil || !strings.Contains(err.Error(), "line 2") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a bad JAAS file: %v", err)
	}
	t.Setenv("KAFKA_OPTS", "-Djava.security.auth.login.config="+filepath.Join(dir, "missing.conf"))
	_, err = LoadConfig(props, nil)
	var e *properties.Error
	if !errors.As(err, &e) || e.Key != "java.security.auth.login.config" || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a missing JAAS file: %v", err)
	}
}
