package broker

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/internal/properties"
)

// Config is a broker's configuration. Field names follow server.properties;
// ParseProperties reads one. The zero value is not usable: start from
// DefaultConfig.
type Config struct {
	BrokerID int32 // broker.id
	// Rack is broker.rack ("" for none): registered in /brokers/ids/{id},
	// answered in Metadata and DescribeCluster, used by rack-aware
	// replica placement (assign.go) and by the rack-aware replica
	// selector (fetch_replica.go).
	Rack string
	// Listeners are "NAME://host:port" (listeners), each NAME's security
	// protocol given by ListenerProtocols; PLAINTEXT, SSL, SASL_PLAINTEXT
	// and SASL_SSL are served.
	// ListenAndServe listens on all of them; Serve takes the first one's
	// listener from the caller, ServeListeners one for each.
	Listeners []string
	// ListenerProtocols is listener.security.protocol.map, by upper-case
	// listener name; nil means Kafka's default (each protocol's own name).
	ListenerProtocols map[string]string
	// SSL is the ssl.* keys of the SSL and SASL_SSL listeners (config_tls.go).
	SSL SSLConfig
	// ListenerSSL is the listener.name.x.ssl.* keys: by upper-case
	// listener name, each ssl.* key's value for that listener, over SSL's
	// (config_listener_ssl.go).
	ListenerSSL map[string]map[string]string
	// SASL is the SASL keys of the SASL_PLAINTEXT and SASL_SSL listeners
	// (config_sasl.go).
	SASL SASLConfig
	// ZooKeeperClient secures the broker's ZooKeeper session: TLS, SASL,
	// secure ACLs (config_zkclient.go).
	ZooKeeperClient ZooKeeperClientConfig
	// Authz is the authorizer and its ACLs' keys (config_authz.go).
	Authz AuthzConfig
	// AdvertisedListeners are registered in /brokers/ids and returned by
	// Metadata (advertised.listeners). Empty means the listener's address.
	AdvertisedListeners []string
	// LogDirs hold the partitions, {dir}/{topic}-{partition} (log.dirs,
	// log.dir). New partitions go to the directory with the fewest.
	LogDirs []string
	// ZooKeeperConnect is "host:port[,host:port...][/chroot]"
	// (zookeeper.connect).
	ZooKeeperConnect        string
	ZooKeeperSessionTimeout time.Duration // zookeeper.session.timeout.ms (18 s)

	NumPartitions            int32 // num.partitions (1)
	DefaultReplicationFactor int16 // default.replication.factor (1)
	AutoCreateTopics         bool  // auto.create.topics.enable (true)
	DeleteTopicEnable        bool  // delete.topic.enable (true)
	// TxnPartitionVerification is transaction.partition.verification.enable
	// (true): KIP-890 verification of transactional produce (partition_txn_verify.go);
	// a dynamic broker config overrides it (Broker.txnVerification).
	TxnPartitionVerification bool

	LogSegmentBytes          int64         // log.segment.bytes (1 GiB)
	LogRollTime              time.Duration // log.roll.ms / log.roll.hours (7 days)
	LogRetention             time.Duration // log.retention.{ms,minutes,hours} (168 h); <0 = forever
	LogRetentionBytes        int64         // log.retention.bytes (-1 = unlimited)
	LogRetentionCheck        time.Duration // log.retention.check.interval.ms (5 min)
	LogFlushIntervalMessages int64         // log.flush.interval.messages (0 = never by count)
	LogFlushInterval         time.Duration // log.flush.interval.ms (0 = never by time)
	LogMessageTimestampType  string        // log.message.timestamp.type (CreateTime)

	MessageMaxBytes       int32 // message.max.bytes (1048588)
	SocketRequestMaxBytes int32 // socket.request.max.bytes (100 MiB)
	// QueuedMaxRequestBytes bounds the request buffers of all connections
	// together (queued.max.request.bytes; <= 0 = unbounded, else at least
	// socket.request.max.bytes, as Kafka requires). zkafka's default is
	// DefaultQueuedMaxRequestBytes (or socket.request.max.bytes if that is
	// larger and the key is not set), not Kafka's -1; see request_budget.go.
	QueuedMaxRequestBytes int64

	Groups GroupConfig // group.* and offsets.* (group_config.go)
	// Txn is transaction.* and transactional.id.* (txn_config.go).
	Txn TxnConfig
	// Replication is replica.* (replication_config.go).
	Replication ReplicationConfig

	Metrics MetricsConfig // zkafka.metrics.*: the Prometheus endpoint (metrics_http.go)
	Cleaner CleanerConfig // log.cleaner.* (cleaner_config.go)
	// InterBroker is the inter-broker listener and controlled.shutdown.*
	// (config_interbroker.go).
	InterBroker InterBrokerConfig
	// LeaderBalance is auto.leader.rebalance.enable and leader.imbalance.*
	// (config_leader_balance.go).
	LeaderBalance LeaderBalanceConfig
	// Quota is quota.window.* (config_quota.go).
	Quota QuotaConfig

	// RequestHook, if set, sees every request before its handler and may
	// delay it, drop its connection or answer it (request_hook.go); no
	// server.properties key sets it. Test harnesses use it.
	RequestHook RequestHook
	// InterBrokerDial, if set, opens this broker's connections to other
	// brokers (and to itself) in place of a plain TCP dial
	// (interbroker_dial.go); no server.properties key sets it. Test
	// harnesses use it to route each pair of brokers through its own
	// proxy.
	InterBrokerDial InterBrokerDialer
	// LogFS, if set, is the file system of the partition logs (nil: the
	// operating system's); no server.properties key sets it. Test
	// harnesses give a fault-injecting one (internal/faultfs) to lose
	// unsynced writes at Kill (kill.go).
	LogFS LogFileSystem

	// topicDefaults are broker defaults of topic configs given in
	// server.properties that Config has no field for (min.insync.replicas,
	// ...), by topic config name; see topicconfig.go.
	topicDefaults map[string]string
	// dyn are the dynamic broker configs (dynamic_config.go), set only in
	// the copy Broker.topicDefaults makes.
	dyn *dynamicConfigs
}

// DefaultConfig is the configuration of `zkafka run`: broker 0 on
// 127.0.0.1:9092, ZooKeeper on 127.0.0.1:2181, data in dataDir, and Kafka's
// defaults for everything else.
func DefaultConfig(dataDir string) Config {
	return Config{
		BrokerID:                 0,
		Listeners:                []string{"PLAINTEXT://127.0.0.1:9092"},
		LogDirs:                  []string{dataDir},
		ZooKeeperConnect:         "127.0.0.1:2181",
		ZooKeeperSessionTimeout:  18 * time.Second,
		NumPartitions:            1,
		DefaultReplicationFactor: 1,
		AutoCreateTopics:         true,
		DeleteTopicEnable:        true,
		TxnPartitionVerification: true,
		LogSegmentBytes:          1 << 30,
		LogRollTime:              7 * 24 * time.Hour,
		LogRetention:             168 * time.Hour,
		LogRetentionBytes:        -1,
		LogRetentionCheck:        5 * time.Minute,
		LogMessageTimestampType:  "CreateTime",
		MessageMaxBytes:          1048588,
		SocketRequestMaxBytes:    100 << 20,
		QueuedMaxRequestBytes:    DefaultQueuedMaxRequestBytes,
		Groups:                   DefaultGroupConfig(),
		Txn:                      DefaultTxnConfig(),
		Replication:              DefaultReplicationConfig(),
		Metrics:                  DefaultMetricsConfig(),
		SSL:                      DefaultSSLConfig(),
		SASL:                     DefaultSASLConfig(),
		ZooKeeperClient:          DefaultZooKeeperClientConfig(),
		Cleaner:                  DefaultCleanerConfig(),
		InterBroker:              DefaultInterBrokerConfig(),
		LeaderBalance:            DefaultLeaderBalanceConfig(),
		Quota:                    DefaultQuotaConfig(),
	}
}

// LoadConfig reads a server.properties file (see ParseProperties), with
// the JVM system properties of KAFKA_OPTS that Kafka takes from there
// (the JAAS file, the ZooKeeper client's; config_zkclient.go). A bad value is a *properties.Error whose text is one line naming
// the file, the key, the value and what is allowed.
func LoadConfig(path string, log *slog.Logger) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	cfg, err := parseProperties(f, log, os.Getenv("KAFKA_OPTS"))
	if err != nil {
		return Config{}, properties.WithFile(err, path)
	}
	return cfg, nil
}

// ParseProperties reads a standard Kafka server.properties (a Java
// properties file, see package internal/properties) over the defaults of
// DefaultConfig("/tmp/kafka-logs"), and checks every value with the rules
// of Kafka's KafkaConfig (config_rules.go). Unknown keys are logged as
// warnings, as Kafka logs them; keys Kafka knows that change nothing in
// zkafka are logged at debug level.
func ParseProperties(r io.Reader, log *slog.Logger) (Config, error) {
	return parseProperties(r, log, "")
}

// parseProperties is ParseProperties with the JVM flags of KAFKA_OPTS
// (applyKafkaOpts), which the keys of the file override.
func parseProperties(r io.Reader, log *slog.Logger, kafkaOpts string) (Config, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := DefaultConfig("/tmp/kafka-logs")
	if err := cfg.applyKafkaOpts(kafkaOpts); err != nil {
		return cfg, err
	}
	props, err := properties.Load(r)
	if err != nil {
		return cfg, err
	}
	rel := relatedKeys{seen: map[string]properties.Property{}}
	for _, p := range props {
		k, v := p.Key, p.Trimmed()
		var err error
		switch k {
		case "broker.id":
			err = intIn(v, 0, math.MaxInt32, &cfg.BrokerID)
			if v == "-1" {
				err = errors.New("automatic broker ids (-1) are not supported: give the broker its id, an integer >= 0")
			}
			rel.brokerID = p
		case "broker.id.generation.enable", "reserved.broker.max.id":
			err = rel.setBrokerIDRule(p)
		case "broker.rack":
			cfg.Rack = v
		case "listeners":
			cfg.Listeners, err = listenersProp(v, false)
		case "advertised.listeners":
			cfg.AdvertisedListeners, err = listenersProp(v, true)
		case "listener.security.protocol.map":
			cfg.ListenerProtocols, err = protocolMapProp(v)
		case "log.dirs", "log.dir":
			err = rel.setLogDirs(p)
		case "zookeeper.connect":
			cfg.ZooKeeperConnect, err = zkConnectProp(v)
		case "zookeeper.session.timeout.ms":
			err = millisIn(v, 1, math.MaxInt32, &cfg.ZooKeeperSessionTimeout)
		case "num.partitions":
			err = intIn(v, 1, math.MaxInt32, &cfg.NumPartitions)
		case "default.replication.factor":
			err = intIn(v, 1, math.MaxInt16, &cfg.DefaultReplicationFactor)
		case "auto.create.topics.enable":
			cfg.AutoCreateTopics, err = p.Bool()
		case "delete.topic.enable":
			cfg.DeleteTopicEnable, err = p.Bool()
		case "transaction.partition.verification.enable":
			cfg.TxnPartitionVerification, err = p.Bool()
		case "log.segment.bytes":
			// LegacyRecord.RECORD_OVERHEAD_V0, Kafka's minimum.
			err = intIn(v, 14, math.MaxInt32, &cfg.LogSegmentBytes)
		case "log.roll.ms", "log.roll.hours", "log.retention.ms", "log.retention.minutes", "log.retention.hours":
			err = rel.setTime(p)
		case "log.retention.bytes":
			err = intIn(v, math.MinInt64, math.MaxInt64, &cfg.LogRetentionBytes)
		case "log.retention.check.interval.ms":
			err = millisIn(v, 1, math.MaxInt64, &cfg.LogRetentionCheck)
		case "log.flush.interval.messages":
			err = intIn(v, 1, math.MaxInt64, &cfg.LogFlushIntervalMessages)
		case "log.flush.interval.ms":
			err = millisIn(v, 0, math.MaxInt64, &cfg.LogFlushInterval)
		case "log.message.timestamp.type":
			err = checkTimestampType(v)
			cfg.LogMessageTimestampType = v
		case "message.max.bytes":
			err = intIn(v, 0, math.MaxInt32, &cfg.MessageMaxBytes)
		case "socket.request.max.bytes":
			err = intIn(v, 1, math.MaxInt32, &cfg.SocketRequestMaxBytes)
		case "queued.max.request.bytes":
			err = intIn(v, math.MinInt64, math.MaxInt64, &cfg.QueuedMaxRequestBytes)
		default:
			err = applyOtherProperty(&cfg, p, log)
		}
		if err != nil {
			return cfg, keyError(p, err)
		}
		rel.seen[k] = p
	}
	if err := rel.apply(&cfg); err != nil {
		return cfg, err
	}
	if key, err := cfg.checkListeners(); err != nil {
		var pe *properties.Error
		if errors.As(err, &pe) { // names its key already (SASL)
			if p, set := rel.seen[pe.Key]; set && pe.Line == 0 {
				pe.Line = p.Line
			}
			return cfg, err
		}
		p, set := rel.seen[key]
		if !set {
			p = properties.Property{Key: key, Value: strings.Join(cfg.Listeners, ",")}
		}
		return cfg, p.Bad(err.Error())
	}
	if q, set := rel.seen["queued.max.request.bytes"]; !set {
		// The default bound makes room for a larger socket.request.max.bytes.
		cfg.QueuedMaxRequestBytes = max(cfg.QueuedMaxRequestBytes, int64(cfg.SocketRequestMaxBytes))
	} else if cfg.QueuedMaxRequestBytes > 0 && cfg.QueuedMaxRequestBytes < int64(cfg.SocketRequestMaxBytes) {
		return cfg, q.Bad(fmt.Sprintf("must be <= 0 (unbounded) or at least socket.request.max.bytes (%d)", cfg.SocketRequestMaxBytes))
	}
	if _, err := cfg.zkSecurity(); err != nil { // keys of several lines: zookeeper.set.acl, the stores
		var pe *properties.Error
		if errors.As(err, &pe) {
			if p, set := rel.seen[pe.Key]; set && pe.Line == 0 {
				pe.Line = p.Line
			}
		}
		return cfg, err
	}
	return cfg, cfg.validate()
}

// applyOtherProperty handles the group coordinator's keys, the broker
// defaults of topic configs, the keys Kafka knows and zkafka ignores, and
// unknown keys.
func applyOtherProperty(cfg *Config, p properties.Property, log *slog.Logger) error {
	k, v := p.Key, p.Trimmed()
	if ok, err := cfg.Replication.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.Groups.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.Txn.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.Metrics.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.Cleaner.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.SSL.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.parseListenerSSL(k, v); ok {
		return err
	}
	if ok, err := cfg.Authz.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.InterBroker.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.LeaderBalance.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.Quota.parseProperty(k, v); ok {
		return err
	}
	if ok, err := cfg.SASL.parseProperty(p, log); ok {
		return err
	}
	if ok, err := cfg.ZooKeeperClient.parseProperty(p); ok {
		return err
	}
	if d := topicDefaultForBrokerKey(k); d != nil {
		if err := d.check(v); err != nil {
			return err
		}
		if cfg.topicDefaults == nil {
			cfg.topicDefaults = map[string]string{}
		}
		cfg.topicDefaults[d.name] = v
		return nil
	}
	if check, ok := ignoredProperties[k]; ok || hasIgnoredPrefix(k) {
		if check != nil {
			if err := check(v); err != nil {
				return err
			}
		}
		log.Debug("server.properties: key accepted and ignored", "key", k)
		return nil
	}
	log.Warn("server.properties: the configuration was supplied but isn't a known config", "key", k, "line", p.Line)
	return nil
}

// keyError makes err, about p, a *properties.Error naming p.
func keyError(p properties.Property, err error) error {
	var e *properties.Error
	if errors.As(err, &e) {
		return err
	}
	return p.Bad(err.Error())
}

// validate checks what the parsing of single keys cannot: the
// configuration may also come from DefaultConfig and code.
func (c *Config) validate() error {
	switch {
	case c.BrokerID < 0:
		return fmt.Errorf("broker.id must be >= 0 (automatic ids are not supported)")
	case len(c.LogDirs) == 0:
		return fmt.Errorf("log.dirs is empty")
	case c.ZooKeeperConnect == "":
		return fmt.Errorf("zookeeper.connect is empty")
	case c.NumPartitions < 1:
		return fmt.Errorf("num.partitions must be >= 1")
	case c.DefaultReplicationFactor < 1:
		return fmt.Errorf("default.replication.factor must be >= 1")
	case c.MessageMaxBytes < 0 || c.SocketRequestMaxBytes <= 0:
		return fmt.Errorf("message.max.bytes and socket.request.max.bytes must be positive")
	case c.QueuedMaxRequestBytes > 0 && c.QueuedMaxRequestBytes < int64(c.SocketRequestMaxBytes):
		return fmt.Errorf("queued.max.request.bytes (%d) must be <= 0 or at least socket.request.max.bytes (%d)", c.QueuedMaxRequestBytes, c.SocketRequestMaxBytes)
	}
	if _, err := c.checkListeners(); err != nil {
		return err
	}
	return c.Cleaner.validate()
}

// ListenAddr is the host:port of the first listener ("" when none).
func (c *Config) ListenAddr() string {
	if len(c.Listeners) == 0 {
		return ""
	}
	_, addr, _ := parseListener(c.Listeners[0])
	return addr
}

// parseListener splits "NAME://host:port" into its upper-case name and
// address, with Kafka's rules (EndPoint's NAME://host:port, the host
// possibly empty or an IPv6 address in brackets, the port 0-65535). The
// name's security protocol comes from listener.security.protocol.map
// (Config.listenerProtocol).
func parseListener(s string) (name, addr string, err error) {
	name, hostport, ok := strings.Cut(s, "://")
	if !ok || !validListenerName(name) {
		return "", "", fmt.Errorf("listener %q: want NAME://host:port", s)
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || !validListenerHost(host) {
		return "", "", fmt.Errorf("listener %q: want NAME://host:port", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", "", fmt.Errorf("listener %q: the port must be an integer from 0 to 65535", s)
	}
	return strings.ToUpper(name), net.JoinHostPort(host, port), nil
}

// validListenerName: letters, digits, '_' and '-', as listener names are
// written (Kafka itself takes any text before "://").
func validListenerName(n string) bool {
	return n != "" && !strings.ContainsFunc(n, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r == '-')
	})
}

// validListenerHost: the characters of Kafka's listener regex,
// [0-9a-zA-Z\-%._:]*.
func validListenerHost(h string) bool {
	return !strings.ContainsFunc(h, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune("-%._:", r))
	})
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseInt32 and parseMillis parse without a range check; ParseProperties
// checks ranges with intIn and millisIn (config_rules.go).
func parseInt32(v string, dst *int32) error {
	n, err := strconv.ParseInt(v, 10, 32)
	*dst = int32(n)
	return err
}

func parseMillis(v string, dst *time.Duration) error {
	n, err := strconv.ParseInt(v, 10, 64)
	*dst = time.Duration(n) * time.Millisecond
	return err
}

// partitionDir is the directory of a partition in logDir.
func partitionDir(logDir, topic string, partition int32) string {
	return filepath.Join(logDir, topic+"-"+strconv.Itoa(int(partition)))
}
