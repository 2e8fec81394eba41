package broker

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/zkafka/zkafka/internal/jaas"
	"github.com/zkafka/zkafka/internal/properties"
)

// Inter-broker SASL: when the inter-broker listener is SASL_PLAINTEXT or
// SASL_SSL, this broker's own clients of other brokers (the controller's
// channels, the replica fetchers, AlterPartition and ControlledShutdown)
// log in with sasl.mechanism.inter.broker.protocol, as the username= and
// password= options of the listener's login module for that mechanism
// (listener.name.X.MECH.sasl.jaas.config, else the JAAS file's
// x.KafkaServer or KafkaServer section), as Kafka's brokers do. With an
// authorizer, that user must be in super.users (the inter-broker APIs
// need CLUSTER_ACTION).

// scramClass is the login module of the SCRAM mechanisms.
const scramClass = "org.apache.kafka.common.security.scram.ScramLoginModule"

// interBrokerMechanismKey is the key naming the inter-broker mechanism.
const interBrokerMechanismKey = "sasl.mechanism.inter.broker.protocol"

// interBrokerSASL is the mechanism of this broker's clients of other
// brokers: nil when the inter-broker listener is not SASL. The error is a
// *properties.Error naming the key to blame, never showing a secret.
func (c *Config) interBrokerSASL() (sasl.Mechanism, error) {
	name := c.interBrokerListener()
	proto, err := c.listenerProtocol(name)
	if err != nil || !isSASLProtocol(proto) {
		return nil, nil
	}
	mech := c.InterBroker.SASLMechanism
	bad := &properties.Error{Key: interBrokerMechanismKey, Value: mech}
	if !slices.Contains(saslMechanisms, mech) {
		bad.Allowed = fmt.Sprintf("the inter-broker listener %s is %s: zkafka's brokers log in to each other with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, not %s", name, proto, mech)
		return nil, bad
	}
	if !slices.Contains(c.SASL.mechanismsOf(name), mech) {
		bad.Allowed = fmt.Sprintf("must be among the mechanisms of the inter-broker listener %s (%s)", name, c.SASL.mechanismKey(name))
		return nil, bad
	}
	class := scramClass
	if mech == "PLAIN" {
		class = plainClass
	}
	user, pass, err := c.SASL.loginOf(name, mech, class)
	if err != nil {
		return nil, err
	}
	switch mech {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	}
	return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
}

// loginOf is the username and password options of the login module class
// for mech on listener name.
func (s *SASLConfig) loginOf(name, mech, class string) (user, pass string, err error) {
	lower := strings.ToLower(name)
	key := "listener.name." + lower + "." + strings.ToLower(mech) + ".sasl.jaas.config"
	bad := &properties.Error{Key: key, Value: "[hidden]"}
	mods := s.Listeners[name].jaasOf(strings.ToLower(mech))
	if mods == nil && s.JAASFile != "" {
		bad.Key, bad.Value = jaasFileProperty, s.JAASFile
		f, err := jaas.Load(s.JAASFile)
		if err != nil {
			bad.Allowed = jaasFileError(s.JAASFile, err)
			return "", "", bad
		}
		if mods = f[lower+".KafkaServer"]; mods == nil {
			mods = f["KafkaServer"]
		}
	}
	if mods == nil {
		bad.Value = ""
		bad.Allowed = fmt.Sprintf("the inter-broker listener %s logs in with %s: set this key (%s with username= and password=), or give a JAAS file with a KafkaServer section", name, mech, class)
		return "", "", bad
	}
	for _, m := range mods {
		if m.LoginModule != class {
			continue
		}
		u, okU := m.Options["username"]
		p, okP := m.Options["password"]
		if okU && okP {
			return u, p, nil
		}
	}
	bad.Allowed = fmt.Sprintf("the inter-broker listener %s logs in with %s: no %s with username= and password= options", name, mech, class)
	return "", "", bad
}

// interBrokerClientOpts are the kgo options of this broker's clients of
// other brokers (the controller's channels, fetchers, AlterPartition,
// ControlledShutdown): TLS when the inter-broker listener is SSL or
// SASL_SSL, with the keystore's certificate as the client's and the
// truststore's CAs (none: the system's), the server name checked as
// Kafka's ssl.endpoint.identification.algorithm=https does; and the SASL
// login when it is SASL_PLAINTEXT or SASL_SSL (b.interBrokerMech, made by New).
func (b *Broker) interBrokerClientOpts() []kgo.Opt {
	var opts []kgo.Opt
	proto, err := b.cfg.listenerProtocol(b.cfg.interBrokerListener())
	if err != nil {
		return nil
	}
	var tlsCfg *tls.Config
	if cfg := b.interBrokerTLS(); isTLSProtocol(proto) && cfg != nil {
		tlsCfg = cfg
	}
	opts = append(opts, b.interBrokerDialOpts(tlsCfg)...)
	if b.interBrokerMech != nil {
		opts = append(opts, kgo.SASL(b.interBrokerMech))
	}
	return opts
}
