package broker

import (
	"sort"
	"strconv"
)

// The rows of DescribeConfigs with Kafka's sources and synonyms: a topic
// config is its override (DYNAMIC_TOPIC_CONFIG) or the broker key that
// gives its default, which is the per-broker dynamic value
// (DYNAMIC_BROKER_CONFIG), the cluster default
// (DYNAMIC_DEFAULT_BROKER_CONFIG), server.properties
// (STATIC_BROKER_CONFIG) or Kafka's default (DEFAULT_CONFIG), the first
// set winning; the synonyms are that chain, most precedent first, as
// Kafka's ConfigHelper lists them. A server.properties value equal to
// Kafka's default is shown as DEFAULT_CONFIG (Config does not record
// which keys the file set).

// configEntry is one row of DescribeConfigs.
type configEntry struct {
	name, value string
	isDefault   bool
	source      int8 // kmsg ConfigSource values
	readOnly    bool
	sensitive   bool // a password: its value (and its synonyms') is null
	synonyms    []configSynonym
}

// configSynonym is one link of a config's chain of sources.
type configSynonym struct {
	name, value string
	source      int8
}

// Config sources, as in DescribeConfigs v1+.
const (
	sourceTopic          int8 = 1 // DYNAMIC_TOPIC_CONFIG
	sourceDynamicBroker  int8 = 2 // DYNAMIC_BROKER_CONFIG
	sourceDynamicDefault int8 = 3 // DYNAMIC_DEFAULT_BROKER_CONFIG
	sourceStaticBroker   int8 = 4 // STATIC_BROKER_CONFIG
	sourceDefaultConfig  int8 = 5 // DEFAULT_CONFIG
)

// kafkaDefaults is Kafka's default configuration, against which a static
// value is told from a default one.
var kafkaDefaults = DefaultConfig("/tmp/kafka-logs")

// dflt is the broker default of topic config d under c: dynamic, then
// static.
func (d *topicConfigDef) dflt(c *Config) string {
	if v, _, ok := c.dyn.lookup(d.brokerKey); ok {
		return v
	}
	return d.brokerDflt(c)
}

// brokerChain is the chain of sources of broker key d.brokerKey.
func brokerChain(c *Config, d *topicConfigDef) []configSynonym {
	if d.brokerKey == "" { // no broker key: Kafka's default only
		return []configSynonym{{d.name, d.brokerDflt(c), sourceDefaultConfig}}
	}
	var out []configSynonym
	if c.dyn != nil {
		if v, ok := c.dyn.broker[d.brokerKey]; ok {
			out = append(out, configSynonym{d.brokerKey, v, sourceDynamicBroker})
		}
		if v, ok := c.dyn.dflt[d.brokerKey]; ok {
			out = append(out, configSynonym{d.brokerKey, v, sourceDynamicDefault})
		}
	}
	def := d.brokerDflt(&kafkaDefaults)
	if v := d.brokerDflt(c); v != def {
		out = append(out, configSynonym{d.brokerKey, v, sourceStaticBroker})
	}
	return append(out, configSynonym{d.brokerKey, def, sourceDefaultConfig})
}

// entryOf makes a row whose value and source are the chain's first link.
func entryOf(name string, chain []configSynonym, readOnly bool) configEntry {
	e := configEntry{name: name, value: chain[0].value, source: chain[0].source, readOnly: readOnly, synonyms: chain}
	e.isDefault = e.source == sourceDefaultConfig
	return e
}

// describeTopicConfig lists every known topic config with its value,
// source and synonyms, sorted by name.
func describeTopicConfig(c *Config, overrides map[string]string) []configEntry {
	out := make([]configEntry, 0, len(topicConfigDefs))
	for i := range topicConfigDefs {
		d := &topicConfigDefs[i]
		chain := brokerChain(c, d)
		if v, ok := overrides[d.name]; ok {
			chain = append([]configSynonym{{d.name, v, sourceTopic}}, chain...)
		}
		e := entryOf(d.name, chain, false)
		if d.brokerKey == "" {
			// Kafka lists no synonym for its own default of a config
			// without a broker key.
			e.synonyms = e.synonyms[:len(e.synonyms)-1]
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// describeBrokerConfig lists the broker's own settings: the static ones
// (read-only) and the dynamic keys with their chains.
func describeBrokerConfig(c *Config) []configEntry {
	s := func(name, v string) configEntry {
		return configEntry{name: name, value: v, source: sourceStaticBroker, readOnly: true,
			synonyms: []configSynonym{{name, v, sourceStaticBroker}}}
	}
	out := []configEntry{
		s("broker.id", strconv.Itoa(int(c.BrokerID))),
		s("zookeeper.connect", c.ZooKeeperConnect),
		s("num.partitions", strconv.Itoa(int(c.NumPartitions))),
		s("default.replication.factor", strconv.Itoa(int(c.DefaultReplicationFactor))),
		s("auto.create.topics.enable", strconv.FormatBool(c.AutoCreateTopics)),
		s("delete.topic.enable", strconv.FormatBool(c.DeleteTopicEnable)),
		s("log.dirs", joinComma(c.LogDirs)),
		s("listeners", joinComma(c.Listeners)),
		s("socket.request.max.bytes", strconv.Itoa(int(c.SocketRequestMaxBytes))),
		s("log.retention.check.interval.ms", durMs(c.LogRetentionCheck)),
	}
	if c.Rack != "" {
		out = append(out, s("broker.rack", c.Rack))
	}
	for k, v := range map[string]string{"ssl.keystore.password": c.SSL.KeystorePassword,
		"ssl.key.password": c.SSL.KeyPassword, "ssl.truststore.password": c.SSL.TruststorePassword} {
		if v != "" { // sensitive: the value is never answered
			out = append(out, configEntry{name: k, source: sourceStaticBroker, readOnly: true, sensitive: true,
				synonyms: []configSynonym{{k, "", sourceStaticBroker}}})
		}
	}
	for i := range topicConfigDefs {
		if d := &topicConfigDefs[i]; d.brokerKey != "" {
			out = append(out, entryOf(d.brokerKey, brokerChain(c, d), dynamicTopicDefault(d.brokerKey) == nil))
		}
	}
	vchain := []configSynonym{{txnVerificationKey, strconv.FormatBool(c.TxnPartitionVerification), sourceStaticBroker}}
	if v, src, ok := c.dyn.lookup(txnVerificationKey); ok {
		vchain = append([]configSynonym{{txnVerificationKey, v, src}}, vchain...)
	}
	out = append(out, entryOf(txnVerificationKey, vchain, false))
	for _, k := range []string{"follower.replication.throttled.rate", "leader.replication.throttled.rate"} {
		chain := []configSynonym{{k, strconv.FormatInt(1<<63-1, 10), sourceDefaultConfig}}
		if v, src, ok := c.dyn.lookup(k); ok {
			chain = append([]configSynonym{{k, v, src}}, chain...)
		}
		out = append(out, entryOf(k, chain, false))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// describeDefaultBrokerConfig is the cluster default resource (name ""):
// only the dynamic default configs, each with itself as synonym, as
// Kafka lists currentDynamicDefaultConfigs.
func describeDefaultBrokerConfig(c *Config) []configEntry {
	var out []configEntry
	if c.dyn != nil {
		for k, v := range c.dyn.dflt {
			out = append(out, entryOf(k, []configSynonym{{k, v, sourceDynamicDefault}}, false))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
