package broker

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is a broker's configuration. Field names follow server.properties;
// ParseProperties reads one. The zero value is not usable: start from
// DefaultConfig.
type Config struct {
	BrokerID int32 // broker.id
	// Listeners are "PLAINTEXT://host:port" (listeners); only PLAINTEXT is
	// served. Serve takes its listener from the caller; ListenAndServe
	// listens on the first of these.
	Listeners []string
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
	}
}

// LoadConfig reads a server.properties file (see ParseProperties).
func LoadConfig(path string, log *slog.Logger) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	cfg, err := ParseProperties(f, log)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// ParseProperties reads a standard Kafka server.properties over the
// defaults of DefaultConfig("/tmp/kafka-logs"). Unknown keys, and keys
// that only matter to features zkafka lacks, are logged as warnings.
func ParseProperties(r io.Reader, log *slog.Logger) (Config, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg := DefaultConfig("/tmp/kafka-logs")
	props, err := readProperties(r)
	if err != nil {
		return cfg, err
	}
	var retMs, retMin, retHours, rollMs, rollHours string
	queuedSet := false
	for _, kv := range props {
		k, v := kv[0], kv[1]
		var err error
		switch k {
		case "broker.id":
			err = parseInt32(v, &cfg.BrokerID)
		case "listeners":
			cfg.Listeners = splitList(v)
		case "advertised.listeners":
			cfg.AdvertisedListeners = splitList(v)
		case "log.dirs", "log.dir":
			cfg.LogDirs = splitList(v)
		case "zookeeper.connect":
			cfg.ZooKeeperConnect = v
		case "zookeeper.session.timeout.ms", "zookeeper.connection.timeout.ms":
			if k == "zookeeper.session.timeout.ms" {
				err = parseMillis(v, &cfg.ZooKeeperSessionTimeout)
			}
		case "num.partitions":
			err = parseInt32(v, &cfg.NumPartitions)
		case "default.replication.factor":
			var n int32
			err = parseInt32(v, &n)
			cfg.DefaultReplicationFactor = int16(n)
		case "auto.create.topics.enable":
			cfg.AutoCreateTopics, err = strconv.ParseBool(v)
		case "delete.topic.enable":
			cfg.DeleteTopicEnable, err = strconv.ParseBool(v)
		case "log.segment.bytes":
			cfg.LogSegmentBytes, err = strconv.ParseInt(v, 10, 64)
		case "log.roll.ms":
			rollMs = v
		case "log.roll.hours":
			rollHours = v
		case "log.retention.ms":
			retMs = v
		case "log.retention.minutes":
			retMin = v
		case "log.retention.hours":
			retHours = v
		case "log.retention.bytes":
			cfg.LogRetentionBytes, err = strconv.ParseInt(v, 10, 64)
		case "log.retention.check.interval.ms":
			err = parseMillis(v, &cfg.LogRetentionCheck)
		case "log.flush.interval.messages":
			cfg.LogFlushIntervalMessages, err = strconv.ParseInt(v, 10, 64)
		case "log.flush.interval.ms":
			err = parseMillis(v, &cfg.LogFlushInterval)
		case "log.message.timestamp.type":
			if v != "CreateTime" && v != "LogAppendTime" {
				err = fmt.Errorf("must be CreateTime or LogAppendTime")
			}
			cfg.LogMessageTimestampType = v
		case "message.max.bytes":
			err = parseInt32(v, &cfg.MessageMaxBytes)
		case "socket.request.max.bytes":
			err = parseInt32(v, &cfg.SocketRequestMaxBytes)
		case "queued.max.request.bytes":
			cfg.QueuedMaxRequestBytes, err = strconv.ParseInt(v, 10, 64)
			queuedSet = true
		default:
			if ok, gerr := cfg.Groups.parseProperty(k, v); ok {
				err = gerr
			} else if ignoredProperties[k] {
				log.Debug("server.properties: key has no effect in zkafka", "key", k)
			} else {
				log.Warn("server.properties: unknown or unsupported key ignored", "key", k)
			}
		}
		if err != nil {
			return cfg, fmt.Errorf("%s=%q: %v", k, v, err)
		}
	}
	if err := applyRetention(&cfg, retMs, retMin, retHours); err != nil {
		return cfg, err
	}
	if err := applyRoll(&cfg, rollMs, rollHours); err != nil {
		return cfg, err
	}
	if !queuedSet { // the default bound makes room for a larger socket.request.max.bytes
		cfg.QueuedMaxRequestBytes = max(cfg.QueuedMaxRequestBytes, int64(cfg.SocketRequestMaxBytes))
	}
	return cfg, cfg.validate()
}

// ignoredProperties are common server.properties keys that tune things
// zkafka does differently (threads, buffers); they are accepted quietly.
var ignoredProperties = map[string]bool{
	"num.network.threads": true, "num.io.threads": true, "socket.send.buffer.bytes": true,
	"socket.receive.buffer.bytes": true, "num.recovery.threads.per.data.dir": true,
	"offsets.topic.replication.factor": true, "transaction.state.log.replication.factor": true,
	"transaction.state.log.min.isr": true, "listener.security.protocol.map": true, "inter.broker.listener.name": true,
	"zookeeper.connection.timeout.ms": true,
}

// applyRetention applies Kafka's precedence: ms over minutes over hours.
func applyRetention(cfg *Config, ms, minutes, hours string) error {
	var n int64
	var err error
	switch {
	case ms != "":
		n, err = strconv.ParseInt(ms, 10, 64)
	case minutes != "":
		n, err = strconv.ParseInt(minutes, 10, 64)
		n *= 60 * 1000
	case hours != "":
		n, err = strconv.ParseInt(hours, 10, 64)
		n *= 3600 * 1000
	default:
		return nil
	}
	if err != nil {
		return fmt.Errorf("log.retention: %v", err)
	}
	if n < 0 {
		cfg.LogRetention = -1
	} else {
		cfg.LogRetention = time.Duration(n) * time.Millisecond
	}
	return nil
}

func applyRoll(cfg *Config, ms, hours string) error {
	var n int64
	var err error
	switch {
	case ms != "":
		n, err = strconv.ParseInt(ms, 10, 64)
	case hours != "":
		n, err = strconv.ParseInt(hours, 10, 64)
		n *= 3600 * 1000
	default:
		return nil
	}
	if err != nil {
		return fmt.Errorf("log.roll: %v", err)
	}
	cfg.LogRollTime = time.Duration(n) * time.Millisecond
	return nil
}

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
		return fmt.Errorf("queued.max.request.bytes (%d) must be -1 or at least socket.request.max.bytes (%d)", c.QueuedMaxRequestBytes, c.SocketRequestMaxBytes)
	}
	for _, l := range append(append([]string(nil), c.Listeners...), c.AdvertisedListeners...) {
		if _, _, err := parseListener(l); err != nil {
			return err
		}
	}
	return nil
}

// ListenAddr is the host:port of the first listener ("" when none).
func (c *Config) ListenAddr() string {
	if len(c.Listeners) == 0 {
		return ""
	}
	_, addr, _ := parseListener(c.Listeners[0])
	return addr
}

// parseListener splits "PLAINTEXT://host:port" into its name and address.
func parseListener(s string) (name, addr string, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", "", fmt.Errorf("listener %q: want NAME://host:port", s)
	}
	if !strings.EqualFold(u.Scheme, "PLAINTEXT") {
		return "", "", fmt.Errorf("listener %q: only PLAINTEXT is supported", s)
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return "", "", fmt.Errorf("listener %q: %v", s, err)
	}
	return strings.ToUpper(u.Scheme), u.Host, nil
}

// readProperties reads Java properties: key=value or key:value lines, #
// and ! comments, backslash line continuations.
func readProperties(r io.Reader) ([][2]string, error) {
	var out [][2]string
	sc := bufio.NewScanner(r)
	var pending string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if pending == "" && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			pending += strings.TrimSuffix(line, `\`)
			continue
		}
		line, pending = pending+line, ""
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			out = append(out, [2]string{line, ""})
			continue
		}
		out = append(out, [2]string{strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])})
	}
	return out, sc.Err()
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
