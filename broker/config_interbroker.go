package broker

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// InterBrokerConfig is how brokers reach each other and how a broker
// leaves the cluster: inter.broker.listener.name,
// security.inter.broker.protocol and controlled.shutdown.*.
type InterBrokerConfig struct {
	// ListenerName is inter.broker.listener.name; empty means the
	// listener named after SecurityProtocol, as Kafka.
	ListenerName     string
	SecurityProtocol string // security.inter.broker.protocol (PLAINTEXT)
	// SASLMechanism is sasl.mechanism.inter.broker.protocol (GSSAPI, which
	// zkafka refuses when the inter-broker listener is SASL): what this
	// broker's own clients log in with (interbroker_sasl.go).
	SASLMechanism string

	// ControlledShutdown is controlled.shutdown.enable (true): Shutdown
	// first asks the controller to move leadership off this broker.
	ControlledShutdown bool
	// ControlledShutdownMaxRetries is controlled.shutdown.max.retries (3).
	ControlledShutdownMaxRetries int32
	// ControlledShutdownRetryBackoff is
	// controlled.shutdown.retry.backoff.ms (5 s).
	ControlledShutdownRetryBackoff time.Duration
}

// DefaultInterBrokerConfig is Kafka's defaults.
func DefaultInterBrokerConfig() InterBrokerConfig {
	return InterBrokerConfig{SecurityProtocol: "PLAINTEXT", SASLMechanism: "GSSAPI", ControlledShutdown: true,
		ControlledShutdownMaxRetries: 3, ControlledShutdownRetryBackoff: 5 * time.Second}
}

func (c *InterBrokerConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "inter.broker.listener.name":
		c.ListenerName = strings.ToUpper(v)
	case "security.inter.broker.protocol":
		c.SecurityProtocol = strings.ToUpper(v)
	case "sasl.mechanism.inter.broker.protocol":
		c.SASLMechanism = v
	case "controlled.shutdown.enable":
		c.ControlledShutdown, err = strconv.ParseBool(v)
	case "controlled.shutdown.max.retries":
		err = intIn(v, 0, math.MaxInt32, &c.ControlledShutdownMaxRetries)
	case "controlled.shutdown.retry.backoff.ms":
		err = millisIn(v, 0, math.MaxInt64, &c.ControlledShutdownRetryBackoff)
	default:
		return false, nil
	}
	return true, err
}

// interBrokerListener is the listener other brokers (and the controller)
// reach this one on: inter.broker.listener.name, else the listener named
// after security.inter.broker.protocol, else (zkafka, where Kafka refuses
// the configuration) the first listener.
func (c *Config) interBrokerListener() string {
	ls, err := c.listenerEntries(c.Listeners)
	if err != nil || len(ls) == 0 {
		return c.InterBroker.ListenerName
	}
	want := c.InterBroker.ListenerName
	if want == "" {
		want = c.InterBroker.SecurityProtocol
	}
	for _, l := range ls {
		if l.name == want {
			return l.name
		}
	}
	return ls[0].name
}
