package broker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/kproto"
)

// Dynamic broker configs, as Kafka's ZooKeeper mode has them
// (DynamicBrokerConfig, BrokerConfigHandler): AlterConfigs and
// IncrementalAlterConfigs of a BROKER resource write /config/brokers/{id}
// (one broker) or /config/brokers/<default> (the cluster default) and a
// /config/changes notification naming brokers/{id} or brokers/<default>;
// every broker re-reads both on such a notification (config_changes.go)
// and at start. A key's value is the per-broker one, else the cluster
// default, else server.properties, else Kafka's default.
//
// The keys accepted are the broker defaults of topic configs
// (topicConfigDefs' brokerKey: log.retention.ms, log.segment.bytes,
// log.cleanup.policy, min.insync.replicas, ...; not
// unclean.leader.election.enable), which a topic without an override
// takes at once (every open topic's config is recomputed), and
// leader.replication.throttled.rate / follower.replication.throttled.rate,
// the replication throttles' rates (throttle.go; applied from this
// broker's own entity only, as Kafka), and
// transaction.partition.verification.enable (partition_txn_produce.go). Any other key is refused as Kafka refuses a key
// that is not dynamic: "Cannot update these configs dynamically".

// defaultBrokerEntity is the name of the cluster default's znode.
const defaultBrokerEntity = "<default>"

// throttleKeys are the replication throttles' dynamic broker keys.
var throttleKeys = map[string]bool{
	"leader.replication.throttled.rate":   true,
	"follower.replication.throttled.rate": true,
}

// dynamicConfigs are the dynamic broker configs this broker follows, by
// broker key: its own (/config/brokers/{id}) and the cluster default.
type dynamicConfigs struct {
	broker, dflt map[string]string
}

// lookup is the dynamic value of a broker key and its source.
func (d *dynamicConfigs) lookup(key string) (string, int8, bool) {
	if d == nil {
		return "", 0, false
	}
	if v, ok := d.broker[key]; ok {
		return v, sourceDynamicBroker, true
	}
	if v, ok := d.dflt[key]; ok {
		return v, sourceDynamicDefault, true
	}
	return "", 0, false
}

// dynamicTopicDefault is the topic config whose default broker key k is,
// if the default may change at run time: all but
// unclean.leader.election.enable, which the controller reads once at
// start (Kafka allows it dynamically).
func dynamicTopicDefault(k string) *topicConfigDef {
	if k == "unclean.leader.election.enable" || k == "" {
		return nil
	}
	for i := range topicConfigDefs {
		if topicConfigDefs[i].brokerKey == k {
			return &topicConfigDefs[i]
		}
	}
	return nil
}

// isDynamicBrokerKey reports whether k may be altered at run time.
func isDynamicBrokerKey(k string) bool {
	return throttleKeys[k] || k == txnVerificationKey || dynamicTopicDefault(k) != nil
}

// brokerEntity is the znode name of a BROKER resource name.
func brokerEntity(name string) string {
	if name == "" {
		return defaultBrokerEntity
	}
	return name
}

func brokerConfigPath(entity string) string { return "/config/brokers/" + entity }

// topicDefaults is the broker configuration topics take their defaults
// from: server.properties with the dynamic configs on top.
func (b *Broker) topicDefaults() *Config {
	c := b.cfg
	c.dyn = b.dyn.Load()
	return &c
}

// checkBrokerConfigs is Kafka's DynamicBrokerConfig validation of an
// alter: keys that are not dynamic are refused all together, then each
// value is checked. Both are ConfigExceptions, which Kafka's
// ZkAdminManager answers as INVALID_REQUEST with the resource named.
func checkBrokerConfigs(name string, cfg map[string]string) error {
	prefix := "Invalid config value for resource " + resourceDesc(kmsg.ConfigResourceTypeBroker, name) + ": "
	var bad []string
	for k := range cfg {
		if !isDynamicBrokerKey(k) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return adminErr(kproto.CodeInvalidRequest, "%sCannot update these configs dynamically: Set(%s)", prefix, strings.Join(bad, ", "))
	}
	for k, v := range cfg {
		check := checkInt(0, math.MaxInt64)
		if d := dynamicTopicDefault(k); d != nil {
			check = d.check
		}
		if k == txnVerificationKey {
			check = checkBool
		}
		if err := check(v); err != nil {
			return adminErr(kproto.CodeInvalidRequest, "%sInvalid value %s for configuration %s: %v", prefix, v, k, err)
		}
	}
	return nil
}

// alterBrokerConfigs applies edit to the stored dynamic configs of a
// broker (name its id) or of the cluster default (name ""), and unless
// validateOnly writes them with a change notification, compare-and-set.
// Another broker's id is INVALID_REQUEST, as in Kafka's ZooKeeper mode.
func (b *Broker) alterBrokerConfigs(name string, validateOnly bool, edit func(map[string]string) error) error {
	if name != "" && name != strconv.Itoa(int(b.cfg.BrokerID)) {
		return adminErr(kproto.CodeInvalidRequest, "Unexpected broker id, expected %d, but received %s", b.cfg.BrokerID, name)
	}
	entity := brokerEntity(name)
	cur, err := casConfig{
		read:  func() (map[string]string, int32, error) { return b.readBrokerConfigs(entity) },
		check: func(cfg map[string]string) error { return checkBrokerConfigs(name, cfg) },
		write: func(cfg map[string]string, v int32) error { return b.writeBrokerConfigs(entity, cfg, v) },
	}.apply(validateOnly, edit)
	if err != nil || validateOnly {
		return err
	}
	b.log.Info("broker config altered", "entity", entity, "config", cur)
	b.reloadDynamicConfigs()
	return nil
}

// readBrokerConfigs reads /config/brokers/{entity} and its version (-1
// when missing).
func (b *Broker) readBrokerConfigs(entity string) (map[string]string, int32, error) {
	data, st, err := b.zk.Get(brokerConfigPath(entity))
	if errors.Is(err, zk.ErrNoNode) {
		return map[string]string{}, -1, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var z zkmeta.ConfigZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", brokerConfigPath(entity), err)
	}
	if z.Config == nil {
		z.Config = map[string]string{}
	}
	return z.Config, st.Version, nil
}

// writeBrokerConfigs stores the configs and the notification in one multi
// (Kafka's AdminZkClient.changeBrokerConfig writes one after the other).
func (b *Broker) writeBrokerConfigs(entity string, cfg map[string]string, version int32) error {
	path := brokerConfigPath(entity)
	data := zkmeta.MustJSON(zkmeta.ConfigZNode{Version: 1, Config: cfg})
	var write any = &zk.SetDataRequest{Path: path, Data: data, Version: version}
	if version < 0 {
		write = &zk.CreateRequest{Path: path, Data: data}
	}
	note := &zk.CreateRequest{Path: zkmeta.ConfigChangePrefix, Data: rawJSON(zkmeta.ConfigChangeZNode{Version: 2, EntityPath: "brokers/" + entity}),
		Flags: zk.FlagSequence}
	return b.zk.Multi(write, note)
}

// loadDynamicConfigs reads this broker's and the default's dynamic
// configs; a znode that cannot be read keeps the previous values.
func (b *Broker) loadDynamicConfigs() {
	b.dynMu.Lock()
	defer b.dynMu.Unlock()
	next := &dynamicConfigs{broker: map[string]string{}, dflt: map[string]string{}}
	if old := b.dyn.Load(); old != nil {
		next.broker, next.dflt = old.broker, old.dflt
	}
	if m, _, err := b.readBrokerConfigs(strconv.Itoa(int(b.cfg.BrokerID))); err == nil {
		next.broker = m
	} else {
		b.log.Warn("reading dynamic broker configs", "err", err)
	}
	if m, _, err := b.readBrokerConfigs(defaultBrokerEntity); err == nil {
		next.dflt = m
	} else {
		b.log.Warn("reading default dynamic broker configs", "err", err)
	}
	b.dyn.Store(next)
	b.applyThrottleRates(next)
}

// reloadDynamicConfigs is loadDynamicConfigs followed by a reload of every
// topic, whose defaults may have changed.
func (b *Broker) reloadDynamicConfigs() {
	b.loadDynamicConfigs()
	for _, t := range b.cluster.allTopics() {
		if err := b.reloadTopic(t.name); err != nil {
			b.log.Warn("reloading topic after a broker config change", "topic", t.name, "err", err)
		}
	}
}

// changedBroker reports whether a notification names this broker's or
// the default's dynamic configs.
func (b *Broker) changedBroker(data []byte) bool {
	var z zkmeta.ConfigChangeZNode
	if json.Unmarshal(data, &z) != nil {
		return false
	}
	entity, ok := strings.CutPrefix(z.EntityPath, "brokers/")
	if z.Version == 1 {
		entity, ok = z.EntityName, z.EntityType == "brokers"
	}
	return ok && (entity == defaultBrokerEntity || entity == strconv.Itoa(int(b.cfg.BrokerID)))
}

// applyIncrementalBroker is prepareIncrementalConfigs for a broker's
// dynamic configs.
func applyIncrementalBroker(cur map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			cur[op.Name] = *op.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(cur, op.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			verb := "append"
			if op.Op == kmsg.IncrementalAlterConfigOpSubtract {
				verb = "subtract"
			}
			return adminErr(kproto.CodeInvalidRequest, "Config value %s is not allowed for config key: %s", verb, op.Name)
		default:
			return adminErr(kproto.CodeInvalidRequest, "Unknown alter config operation %d", op.Op)
		}
	}
	return nil
}

// rawJSON is v in JSON without Go's HTML escapes, as Kafka's Jackson
// writes it ("brokers/<default>", not "brokers/\u003cdefault\u003e").
func rawJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
