package broker

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// DescribeConfigs (key 32), v0-4, via kmsg.
//
// Topics (resource type 2): every topic config zkafka knows
// (topicconfig.go), overrides from /config/topics/{t} with source
// DYNAMIC_TOPIC_CONFIG, the rest with the source of their broker default
// (config_describe.go; is_default in v0). Brokers (type 4): this
// broker's static settings (read-only) and its dynamic keys with their
// sources; another broker id gets INVALID_REQUEST, as a broker only
// describes itself in ZooKeeper mode; the cluster default ("") lists only
// the dynamic default configs. Synonyms (v1+, include_synonyms)
// list each value's chain of sources; a password (ssl.*.password) is
// sensitive and its value null. Documentation (v3+) is left empty; config
// types (v3+) are given for the keys zkafka knows. Other resource types:
// INVALID_REQUEST.

func init() { regKey(kproto.KeyDescribeConfigs, 0, 4, kmsgHandler(handleDescribeConfigs)) }

func handleDescribeConfigs(c *conn, req *kmsg.DescribeConfigsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	var denied []kmsg.DescribeConfigsResponseResource // answered after the others, as Kafka
	for _, r := range req.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
		if rr.ErrorCode = c.configsDenied(authz.OpDescribeConfigs, r.ResourceType, r.ResourceName); rr.ErrorCode != 0 {
			rr.ErrorMessage = kerrMessage(rr.ErrorCode)
			denied = append(denied, rr)
			continue
		}
		var entries []configEntry
		switch r.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			t := c.b.cluster.topic(r.ResourceName)
			if t == nil {
				rr.ErrorCode = int16(kproto.CodeUnknownTopicOrPartition)
				break
			}
			entries = describeTopicConfig(c.b.topicDefaults(), t.overrides)
		case kmsg.ConfigResourceTypeBroker:
			if r.ResourceName != "" && r.ResourceName != strconv.Itoa(int(c.b.cfg.BrokerID)) {
				msg := "Unexpected broker id, expected " + strconv.Itoa(int(c.b.cfg.BrokerID))
				rr.ErrorCode, rr.ErrorMessage = int16(kproto.CodeInvalidRequest), &msg
				break
			}
			if r.ResourceName == "" {
				entries = describeDefaultBrokerConfig(c.b.topicDefaults())
				break
			}
			entries = describeBrokerConfig(c.b.topicDefaults())
		default:
			msg := "unsupported resource type"
			rr.ErrorCode, rr.ErrorMessage = int16(kproto.CodeInvalidRequest), &msg
		}
		for _, e := range filterConfigs(entries, r.ConfigNames) {
			rc := kmsg.NewDescribeConfigsResponseResourceConfig()
			v := e.value
			rc.Name, rc.Value, rc.Source, rc.IsDefault = e.name, &v, kmsg.ConfigSource(e.source), e.isDefault
			rc.ConfigType = configType(e.name)
			rc.ReadOnly = e.readOnly
			if e.sensitive {
				rc.Value, rc.IsSensitive = nil, true
			}
			if req.IncludeSynonyms {
				for _, sy := range e.synonyms {
					rs := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
					rs.Name, rs.Value, rs.Source = sy.name, &sy.value, kmsg.ConfigSource(sy.source)
					if rc.IsSensitive {
						rs.Value = nil
					}
					rc.ConfigSynonyms = append(rc.ConfigSynonyms, rs)
				}
			}
			rr.Configs = append(rr.Configs, rc)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	resp.Resources = append(resp.Resources, denied...)
	return resp, nil
}

// filterConfigs keeps the requested names (all when names is nil).
func filterConfigs(entries []configEntry, names []string) []configEntry {
	if names == nil {
		return entries
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []configEntry
	for _, e := range entries {
		if want[e.name] {
			out = append(out, e)
		}
	}
	return out
}

// configType is the v3+ type of a config key.
func configType(name string) kmsg.ConfigType {
	switch name {
	case "cleanup.policy", "message.timestamp.type", "compression.type", "zookeeper.connect",
		"log.cleanup.policy", "log.message.timestamp.type", "log.dirs", "listeners":
		return kmsg.ConfigTypeString
	case "unclean.leader.election.enable", "auto.create.topics.enable", "delete.topic.enable":
		return kmsg.ConfigTypeBoolean
	case "max.message.bytes", "min.insync.replicas", "segment.bytes", "broker.id", "num.partitions",
		"message.max.bytes", "socket.request.max.bytes", "log.segment.bytes":
		return kmsg.ConfigTypeInt
	case "default.replication.factor":
		return kmsg.ConfigTypeShort
	}
	return kmsg.ConfigTypeLong
}
