package kafkasasl

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/jaas"
	"github.com/zkafka/zkafka/internal/keystore/keystoretest"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

// The PLAIN users of the test brokers.
const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required
	username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

// saslBroker starts a broker with listeners (the first one is Addr): a
// SASL_PLAINTEXT listener named SASL_PLAINTEXT and, when p is set, a
// SASL_SSL listener with p's keystore, both offering PLAIN (the users of
// plainJAAS) and both SCRAM mechanisms, and a PLAINTEXT listener for the
// admin client. mods adjust the config after.
func saslBroker(t testing.TB, p *keystoretest.BrokerFiles, mods ...func(*broker.Config)) *kafkaenv.Env {
	t.Helper()
	mods = append([]func(*broker.Config){func(c *broker.Config) {
		c.Listeners = []string{"SASL_PLAINTEXT://127.0.0.1:0", "PLAINTEXT://127.0.0.1:0"}
		if p != nil {
			c.Listeners = append(c.Listeners, "SASL_SSL://127.0.0.1:0")
			c.SSL.KeystoreType, c.SSL.KeystoreLocation, c.SSL.KeystorePassword = "PKCS12", p.ServerP12, "changeit"
		}
		c.SASL.EnabledMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
		mods, err := jaas.ParseEntries(plainJAAS)
		if err != nil {
			t.Fatal(err)
		}
		c.SASL.Listeners = map[string]*broker.SASLListenerConfig{}
		for _, l := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
			c.SASL.Listeners[l] = &broker.SASLListenerConfig{JAAS: map[string][]jaas.Entry{"plain": mods}}
		}
	}}, mods...)
	return kafkaenv.Start(t, kafkaenv.Configure(mods...), kafkaenv.VerboseLogs())
}

// Listener addresses of saslBroker.
func saslAddr(e *kafkaenv.Env) string  { return e.Addrs[0] }
func plainAddr(e *kafkaenv.Env) string { return e.Addrs[1] }
func saslSSLAddr(e *kafkaenv.Env) string {
	return e.Addrs[2]
}

// admin is a kadm client on the PLAINTEXT listener.
func admin(e *kafkaenv.Env) *kadm.Client {
	return kadm.NewClient(e.Client(kgo.SeedBrokers(plainAddr(e))))
}

// saslClient is a kgo client of addr logging in with mech, over TLS
// trusting p's CA when p is set.
func saslClient(e *kafkaenv.Env, addr string, p *keystoretest.BrokerFiles, mech sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
	opts = append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.SASL(mech)}, opts...)
	if p != nil {
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{RootCAs: p.CAPool, MinVersion: tls.VersionTLS12}))
	}
	return e.Client(opts...)
}

func plainAuth(user, pass string) sasl.Mechanism {
	return plain.Auth{User: user, Pass: pass}.AsMechanism()
}

func scramAuth(mech, user, pass string) sasl.Mechanism {
	a := scram.Auth{User: user, Pass: pass}
	if mech == "SCRAM-SHA-512" {
		return a.AsSha512Mechanism()
	}
	return a.AsSha256Mechanism()
}

// addSCRAM gives user the password for mech through kadm.
func addSCRAM(t testing.TB, e *kafkaenv.Env, user, pass, mech string) {
	t.Helper()
	m := kadm.ScramSha256
	if mech == "SCRAM-SHA-512" {
		m = kadm.ScramSha512
	}
	res, err := admin(e).AlterUserSCRAMs(ctx(t), nil, []kadm.UpsertSCRAM{{User: user, Mechanism: m, Iterations: 4096, Password: pass}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("AlterUserSCRAMs %s %s: %v", user, mech, err)
	}
}

func ctx(t testing.TB) context.Context { return kafkaenv.Context(t, 30*time.Second) }
