package zkmeta

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Kafka's persistent top-level paths (KafkaZkClient.createTopLevelPaths).
var PersistentPaths = []string{
	"/consumers", "/brokers", "/brokers/ids", "/brokers/topics", "/brokers/seqid",
	"/config", "/config/changes", "/config/clients", "/config/brokers", "/config/topics",
	"/config/users", "/admin", "/admin/delete_topics", "/isr_change_notification",
	"/latest_producer_id_block", "/log_dir_event_notification", "/cluster",
}

// Znode contents, in Apache Kafka's ZooKeeper-mode JSON shapes.

type ClusterIDZNode struct {
	Version string `json:"version"`
	ID      string `json:"id"`
}

type BrokerZNode struct {
	ListenerSecurityProtocolMap map[string]string `json:"listener_security_protocol_map"`
	Endpoints                   []string          `json:"endpoints"`
	// Rack is broker.rack, absent when the broker has none (as Kafka's
	// BrokerIdZNode.encode writes it from version 3).
	Rack string `json:"rack,omitempty"`
	// Features are the broker's supported features (version 5): {} from
	// a ZooKeeper-mode broker, as Kafka 3.7 writes them.
	Features  map[string]any `json:"features"`
	JMXPort   int            `json:"jmx_port"`
	Host      string         `json:"host"`
	Timestamp string         `json:"timestamp"`
	Port      int            `json:"port"`
	Version   int            `json:"version"`
}

type TopicZNode struct {
	Partitions       map[string][]int32 `json:"partitions"`
	TopicID          string             `json:"topic_id,omitempty"`
	AddingReplicas   map[string][]int32 `json:"adding_replicas"`
	RemovingReplicas map[string][]int32 `json:"removing_replicas"`
	Version          int                `json:"version"`
}

type PartitionStateZNode struct {
	ControllerEpoch int32   `json:"controller_epoch"`
	Leader          int32   `json:"leader"`
	Version         int     `json:"version"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	ISR             []int32 `json:"isr"`
}

type ControllerZNode struct {
	Version   int    `json:"version"`
	BrokerID  int32  `json:"brokerid"`
	Timestamp string `json:"timestamp"`
}

type ConfigZNode struct {
	Version int               `json:"version"`
	Config  map[string]string `json:"config"`
}

// ConfigChangeZNode is /config/changes/config_change_N: version 2 names
// the entity as "topics/<name>" (or "brokers/<id>"); version 1, written
// by Kafka before 2.0, as entity_type and entity_name.
type ConfigChangeZNode struct {
	Version    int    `json:"version"`
	EntityPath string `json:"entity_path,omitempty"`
	EntityType string `json:"entity_type,omitempty"`
	EntityName string `json:"entity_name,omitempty"`
}

// ConfigChangesPath holds the change notifications; ConfigChangePrefix is
// the name of a new (sequential) one.
const (
	ConfigChangesPath  = "/config/changes"
	ConfigChangePrefix = ConfigChangesPath + "/config_change_"
	// ConfigUsersPath holds the users' configs: SCRAM credentials, quotas.
	ConfigUsersPath = "/config/users"
	// ConfigClientsPath holds the client ids' configs: quotas.
	ConfigClientsPath = "/config/clients"
)

// UserConfigPath is the config znode of a user, by its name as Kafka's
// Sanitizer writes it (URL-encoded).
func UserConfigPath(sanitized string) string { return ConfigUsersPath + "/" + sanitized }

type ProducerIDBlockZNode struct {
	Version    int    `json:"version"`
	Broker     int32  `json:"broker"`
	BlockStart string `json:"block_start"`
	BlockEnd   string `json:"block_end"`
}

func MustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own static types are marshalled
	}
	return b
}

func NowMillisString() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }

// NewUUID returns a random Kafka Uuid (never all zeros).
func NewUUID() [16]byte {
	var u [16]byte
	for u == ([16]byte{}) {
		_, _ = rand.Read(u[:])
	}
	return u
}

// UUIDString is Kafka's Uuid.toString: URL-safe base64 without padding.
func UUIDString(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("invalid topic id %q", s)
	}
	copy(u[:], b)
	return u, nil
}

// EncodeTopicZNode builds /brokers/topics/{topic}.
func EncodeTopicZNode(id [16]byte, replicas [][]int32) []byte {
	z := TopicZNode{Version: 3, Partitions: map[string][]int32{},
		AddingReplicas: map[string][]int32{}, RemovingReplicas: map[string][]int32{}, TopicID: UUIDString(id)}
	for p, r := range replicas {
		z.Partitions[strconv.Itoa(p)] = r
	}
	return MustJSON(z)
}

// DecodeTopicZNode parses /brokers/topics/{topic}: the replica lists by
// partition and the topic id (zero when a pre-2.8 Kafka wrote it).
func DecodeTopicZNode(data []byte) ([16]byte, [][]int32, error) {
	var z TopicZNode
	var id [16]byte
	if err := json.Unmarshal(data, &z); err != nil {
		return id, nil, err
	}
	if z.TopicID != "" {
		var err error
		if id, err = ParseUUID(z.TopicID); err != nil {
			return id, nil, err
		}
	}
	replicas := make([][]int32, len(z.Partitions))
	for k, r := range z.Partitions {
		p, err := strconv.Atoi(k)
		if err != nil || p < 0 || p >= len(replicas) {
			return id, nil, fmt.Errorf("partition %q is not in 0..%d", k, len(replicas)-1)
		}
		replicas[p] = r
	}
	return id, replicas, nil
}

func TopicPath(t string) string            { return "/brokers/topics/" + t }
func PartitionsPath(t string) string       { return "/brokers/topics/" + t + "/partitions" }
func PartitionPath(t string, p int) string { return PartitionsPath(t) + "/" + strconv.Itoa(p) }
func StatePath(t string, p int) string     { return PartitionPath(t, p) + "/state" }
func TopicConfigPath(t string) string      { return "/config/topics/" + t }
func DeleteTopicPath(t string) string      { return "/admin/delete_topics/" + t }
func BrokerPath(id int32) string           { return "/brokers/ids/" + strconv.Itoa(int(id)) }
