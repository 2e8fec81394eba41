package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/kproto"
)

// Altering configs at run time, shared by AlterConfigs (33) and
// IncrementalAlterConfigs (44), as Kafka's ZooKeeper-mode AdminManager
// does it: the new overrides are validated by the topic-config rules
// (topicconfig.go), written to /config/topics/{t}, and announced by a
// sequential /config/changes/config_change_N that every broker follows
// (config_changes.go).

// resourceDesc is how Kafka prints a ConfigResource in its messages.
func resourceDesc(typ kmsg.ConfigResourceType, name string) string {
	t := "TOPIC"
	if typ == kmsg.ConfigResourceTypeBroker {
		t = "BROKER"
	}
	return fmt.Sprintf("ConfigResource(type=%s, name='%s')", t, name)
}

// checkAlteredTopicConfigs is Kafka's LogConfig.validate for an alter: an
// unknown name is INVALID_CONFIG on its own; a bad value is a
// ConfigException, which AdminManager wraps with the resource.
func checkAlteredTopicConfigs(topic string, overrides map[string]string) error {
	names := make([]string, 0, len(overrides))
	for k := range overrides {
		names = append(names, k)
	}
	sort.Strings(names)
	prefix := "Invalid config value for resource " + resourceDesc(kmsg.ConfigResourceTypeTopic, topic) + ": "
	for _, k := range names {
		d := findTopicConfigDef(k)
		if d == nil {
			return adminErr(kproto.CodeInvalidConfig, "Unknown topic config name: %s", k)
		}
		if err := d.check(overrides[k]); err != nil {
			return adminErr(kproto.CodeInvalidConfig, "%sInvalid value %s for configuration %s: %v", prefix, overrides[k], k, err)
		}
	}
	if err := checkCompactionLags(overrides); err != nil {
		return adminErr(kproto.CodeInvalidConfig, "%s%v", prefix, err)
	}
	return nil
}

// alterTopicOverrides applies edit to the topic's stored overrides and,
// unless validateOnly, writes the result with a change notification. The
// write is a compare-and-set on /config/topics/{t}, retried when another
// alter came in between, so that incremental edits are not lost.
func (b *Broker) alterTopicOverrides(topic string, validateOnly bool, edit func(map[string]string) error) error {
	if topic == "" || strings.Contains(topic, "/") {
		return adminErr(kproto.CodeUnknownTopicOrPartition, "The topic '%s' does not exist.", topic)
	}
	check := func(cfg map[string]string) error {
		if b.cluster.topic(topic) == nil {
			return adminErr(kproto.CodeUnknownTopicOrPartition, "The topic '%s' does not exist.", topic)
		}
		return checkAlteredTopicConfigs(topic, cfg)
	}
	cur, err := casConfig{
		read:  func() (map[string]string, int32, error) { return b.readTopicOverrides(topic) },
		check: check,
		write: func(cfg map[string]string, v int32) error { return b.writeTopicOverrides(topic, cfg, v) },
	}.apply(validateOnly, edit)
	if err != nil || validateOnly {
		return err
	}
	b.log.Info("topic config altered", "topic", topic, "config", cur)
	// This broker applies it now, so that a describe sent to it next
	// sees it; the others (and this one again) follow the notification.
	if err := b.reloadTopic(topic); err != nil {
		b.log.Warn("reloading altered topic config", "topic", topic, "err", err)
	}
	return nil
}

// readTopicOverrides reads /config/topics/{t} and its version (-1 when the
// znode is missing, as for a topic created by a tool that wrote none).
func (b *Broker) readTopicOverrides(topic string) (map[string]string, int32, error) {
	data, st, err := b.zk.Get(zkmeta.TopicConfigPath(topic))
	if errors.Is(err, zk.ErrNoNode) {
		return map[string]string{}, -1, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var z zkmeta.ConfigZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", zkmeta.TopicConfigPath(topic), err)
	}
	if z.Config == nil {
		z.Config = map[string]string{}
	}
	return z.Config, st.Version, nil
}

// writeTopicOverrides stores the overrides and the change notification in
// one multi (Kafka writes them one after the other).
func (b *Broker) writeTopicOverrides(topic string, overrides map[string]string, version int32) error {
	data := zkmeta.MustJSON(zkmeta.ConfigZNode{Version: 1, Config: overrides})
	var write any = &zk.SetDataRequest{Path: zkmeta.TopicConfigPath(topic), Data: data, Version: version}
	if version < 0 {
		write = &zk.CreateRequest{Path: zkmeta.TopicConfigPath(topic), Data: data}
	}
	note := &zk.CreateRequest{Path: zkmeta.ConfigChangePrefix, Data: zkmeta.MustJSON(zkmeta.ConfigChangeZNode{Version: 2, EntityPath: "topics/" + topic}),
		Flags: zk.FlagSequence}
	return b.zk.Multi(write, note)
}

// applyIncremental is Kafka's prepareIncrementalConfigs: SET and DELETE
// edit one key; APPEND and SUBTRACT edit a list-typed key (cleanup.policy),
// starting from Kafka's default when the topic has no override.
func applyIncremental(overrides map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	for _, op := range ops {
		name := op.Name
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			overrides[name] = *op.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(overrides, name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			verb := "append"
			if op.Op == kmsg.IncrementalAlterConfigOpSubtract {
				verb = "subtract"
			}
			if findTopicConfigDef(name) == nil {
				return adminErr(kproto.CodeInvalidConfig, "Unknown topic config name: %s", name)
			}
			if !isListConfig(name) {
				return adminErr(kproto.CodeInvalidRequest, "Config value %s is not allowed for config key: %s", verb, name)
			}
			old, ok := overrides[name]
			if !ok {
				old = storedTopicDefaults[name]
			}
			list := strings.Split(old, ",")
			if op.Op == kmsg.IncrementalAlterConfigOpAppend {
				for _, v := range strings.Split(*op.Value, ",") {
					if !slices.Contains(list, v) {
						list = append(list, v)
					}
				}
			} else {
				drop := strings.Split(*op.Value, ",")
				list = slices.DeleteFunc(list, func(v string) bool { return slices.Contains(drop, v) })
			}
			overrides[name] = strings.Join(list, ",")
		default:
			return adminErr(kproto.CodeInvalidRequest, "Unknown alter config operation %d", op.Op)
		}
	}
	return nil
}

// isListConfig reports whether a topic config is of Kafka's LIST type.
func isListConfig(name string) bool { return name == "cleanup.policy" }

// setConfig gives an open partition a topic's new config (a reload after
// an alter): appends, the cleaner and retention read it from p.cfg, the
// log takes its new size, age and retention limits.
func (p *partition) setConfig(cfg *topicConfig) {
	p.cfg.Store(cfg)
	p.log.SetLimits(cfg.segmentOptions())
}
