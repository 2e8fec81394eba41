package broker

import (
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/properties"
)

// brokerCases are server.properties lines; bad names the key the error
// must name ("" = good), check tests a good result.
var brokerCases = []struct {
	lines string
	bad   string
	check func(c Config) bool
}{
	{"broker.id=7", "", func(c Config) bool { return c.BrokerID == 7 }},
	{"broker.id=1000", "", func(c Config) bool { return c.BrokerID == 1000 }},
	{"broker.id=1001", "broker.id", nil},
	{"broker.id=1001\nreserved.broker.max.id=2000", "", func(c Config) bool { return c.BrokerID == 1001 }},
	{"broker.id=5000\nbroker.id.generation.enable=false", "", func(c Config) bool { return c.BrokerID == 5000 }},
	{"broker.id=-1", "broker.id", nil},
	{"broker.id=one", "broker.id", nil},
	{"broker.id=2147483648", "broker.id", nil},
	{"reserved.broker.max.id=-1", "reserved.broker.max.id", nil},
	{"broker.id.generation.enable=no", "broker.id.generation.enable", nil},
	{"listeners=PLAINTEXT://:9093", "", func(c Config) bool { return c.ListenAddr() == ":9093" }},
	{"listeners=plaintext://127.0.0.1:0", "", func(c Config) bool { return c.ListenAddr() == "127.0.0.1:0" }},
	{"listeners=PLAINTEXT://[::1]:9093", "", func(c Config) bool { return c.ListenAddr() == "[::1]:9093" }},
	{"listeners=SSL://x:1", "listeners", nil},
	{"listeners=PLAINTEXT://x", "listeners", nil},
	{"listeners=PLAINTEXT://x:99999", "listeners", nil},
	{"listeners=PLAINTEXT://x:-1", "listeners", nil},
	{"listeners=x:9092", "listeners", nil},
	{"listeners=", "listeners", nil},
	{"listeners=PLAINTEXT://a:9092,PLAINTEXT://b:9093", "listeners", nil},
	{"advertised.listeners=PLAINTEXT://kafka.example:9092", "", func(c Config) bool {
		return len(c.AdvertisedListeners) == 1 && c.AdvertisedListeners[0] == "PLAINTEXT://kafka.example:9092"
	}},
	{"advertised.listeners=PLAINTEXT://0.0.0.0:9092", "advertised.listeners", nil},
	{"advertised.listeners=PLAINTEXT://h:abc", "advertised.listeners", nil},
	{"log.dirs=/a, /b", "", func(c Config) bool { return len(c.LogDirs) == 2 && c.LogDirs[1] == "/b" }},
	{"log.dir=/a", "", func(c Config) bool { return len(c.LogDirs) == 1 && c.LogDirs[0] == "/a" }},
	{"log.dirs=/b\nlog.dir=/a", "", func(c Config) bool { return len(c.LogDirs) == 1 && c.LogDirs[0] == "/b" }},
	{"log.dirs=", "log.dirs", nil},
	{"log.dirs= , ", "log.dirs", nil},
	{"zookeeper.connect=zk1:2181,zk2:2182/kafka/a", "", func(c Config) bool { return c.ZooKeeperConnect == "zk1:2181,zk2:2182/kafka/a" }},
	{"zookeeper.connect=zk1,[::1]:2181/", "", func(c Config) bool { return c.ZooKeeperConnect == "zk1,[::1]:2181/" }},
	{"zookeeper.connect=", "zookeeper.connect", nil},
	{"zookeeper.connect=zk1:http", "zookeeper.connect", nil},
	{"zookeeper.connect=zk1:2181,,zk2:2181", "zookeeper.connect", nil},
	{"zookeeper.connect=zk1:2181/kafka/", "zookeeper.connect", nil},
	{"zookeeper.connect=zk1:2181/a//b", "zookeeper.connect", nil},
	{"zookeeper.connect=zk1:2181/a/../b", "zookeeper.connect", nil},
	{"zookeeper.session.timeout.ms=6000", "", func(c Config) bool { return c.ZooKeeperSessionTimeout == 6*time.Second }},
	{"zookeeper.session.timeout.ms=0", "zookeeper.session.timeout.ms", nil},
	{"zookeeper.connection.timeout.ms=6000", "", func(Config) bool { return true }},
	{"zookeeper.connection.timeout.ms=6s", "zookeeper.connection.timeout.ms", nil},
	{"num.partitions=12", "", func(c Config) bool { return c.NumPartitions == 12 }},
	{"num.partitions=0", "num.partitions", nil},
	{"default.replication.factor=3", "", func(c Config) bool { return c.DefaultReplicationFactor == 3 }},
	{"default.replication.factor=0", "default.replication.factor", nil},
	{"default.replication.factor=32768", "default.replication.factor", nil},
	{"auto.create.topics.enable=FALSE", "", func(c Config) bool { return !c.AutoCreateTopics }},
	{"auto.create.topics.enable=0", "auto.create.topics.enable", nil},
	{"delete.topic.enable=false", "", func(c Config) bool { return !c.DeleteTopicEnable }},
	{"delete.topic.enable=t", "delete.topic.enable", nil},
	{"log.segment.bytes=14", "", func(c Config) bool { return c.LogSegmentBytes == 14 }},
	{"log.segment.bytes=2147483647", "", func(c Config) bool { return c.LogSegmentBytes == math.MaxInt32 }},
	{"log.segment.bytes=13", "log.segment.bytes", nil},
	{"log.segment.bytes=2147483648", "log.segment.bytes", nil},
	{"log.segment.bytes=1GB", "log.segment.bytes", nil},
	{"log.roll.hours=1", "", func(c Config) bool { return c.LogRollTime == time.Hour }},
	{"log.roll.hours=1\nlog.roll.ms=500", "", func(c Config) bool { return c.LogRollTime == 500*time.Millisecond }},
	{"log.roll.hours=0", "log.roll.hours", nil},
	{"log.roll.ms=0", "log.roll.ms", nil},
	{"log.roll.ms=1\nlog.roll.hours=x", "log.roll.hours", nil},
	{"log.retention.hours=24", "", func(c Config) bool { return c.LogRetention == 24*time.Hour }},
	{"log.retention.minutes=30\nlog.retention.hours=24", "", func(c Config) bool { return c.LogRetention == 30*time.Minute }},
	{"log.retention.ms=1000\nlog.retention.minutes=30", "", func(c Config) bool { return c.LogRetention == time.Second }},
	{"log.retention.ms=-1", "", func(c Config) bool { return c.LogRetention < 0 }},
	{"log.retention.hours=-5", "", func(c Config) bool { return c.LogRetention < 0 }},
	{"log.retention.ms=0", "log.retention.ms", nil},
	{"log.retention.minutes=0", "log.retention.minutes", nil},
	{"log.retention.hours=0", "log.retention.hours", nil},
	{"log.retention.minutes=2147483648", "log.retention.minutes", nil},
	{"log.retention.ms=1\nlog.retention.hours=x", "log.retention.hours", nil},
	{"log.retention.bytes=1073741824", "", func(c Config) bool { return c.LogRetentionBytes == 1<<30 }},
	{"log.retention.bytes=-1", "", func(c Config) bool { return c.LogRetentionBytes == -1 }},
	{"log.retention.bytes=1G", "log.retention.bytes", nil},
	{"log.retention.check.interval.ms=1000", "", func(c Config) bool { return c.LogRetentionCheck == time.Second }},
	{"log.retention.check.interval.ms=9223372036854775807", "", func(c Config) bool { return c.LogRetentionCheck == math.MaxInt64 }},
	{"log.retention.hours=2147483647", "", func(c Config) bool { return c.LogRetention == math.MaxInt64 }},
	{"log.retention.check.interval.ms=0", "log.retention.check.interval.ms", nil},
	{"log.flush.interval.messages=10000", "", func(c Config) bool { return c.LogFlushIntervalMessages == 10000 }},
	{"log.flush.interval.messages=9223372036854775807", "", func(c Config) bool { return c.LogFlushIntervalMessages == math.MaxInt64 }},
	{"log.flush.interval.messages=0", "log.flush.interval.messages", nil},
	{"log.flush.interval.ms=1000", "", func(c Config) bool { return c.LogFlushInterval == time.Second }},
	{"log.flush.interval.ms=-1", "log.flush.interval.ms", nil},
	{"log.message.timestamp.type=LogAppendTime", "", func(c Config) bool { return c.LogMessageTimestampType == "LogAppendTime" }},
	{"log.message.timestamp.type=logappendtime", "log.message.timestamp.type", nil},
	{"message.max.bytes=0", "", func(c Config) bool { return c.MessageMaxBytes == 0 }},
	{"message.max.bytes=-1", "message.max.bytes", nil},
	{"message.max.bytes=2147483648", "message.max.bytes", nil},
	{"socket.request.max.bytes=1", "", func(c Config) bool { return c.SocketRequestMaxBytes == 1 }},
	{"socket.request.max.bytes=0", "socket.request.max.bytes", nil},
	{"group.min.session.timeout.ms=1000\ngroup.max.session.timeout.ms=2000", "", func(c Config) bool {
		return c.Groups.MinSessionTimeout == time.Second && c.Groups.MaxSessionTimeout == 2*time.Second
	}},
	{"group.min.session.timeout.ms=0", "group.min.session.timeout.ms", nil},
	{"group.max.session.timeout.ms=-1", "group.max.session.timeout.ms", nil},
	{"group.min.session.timeout.ms=5000\ngroup.max.session.timeout.ms=4000", "group.min.session.timeout.ms", nil},
	{"group.initial.rebalance.delay.ms=0", "", func(c Config) bool { return c.Groups.InitialRebalanceDelay == 0 }},
	{"group.initial.rebalance.delay.ms=-1", "group.initial.rebalance.delay.ms", nil},
	{"group.max.size=10", "", func(c Config) bool { return c.Groups.MaxSize == 10 }},
	{"group.max.size=0", "group.max.size", nil},
	{"offset.metadata.max.bytes=100", "", func(c Config) bool { return c.Groups.OffsetMetadataMaxBytes == 100 }},
	{"offset.metadata.max.bytes=0", "offset.metadata.max.bytes", nil},
	{"offsets.retention.minutes=60", "", func(c Config) bool { return c.Groups.OffsetsRetention == time.Hour }},
	{"offsets.retention.minutes=0", "offsets.retention.minutes", nil},
	{"offsets.retention.check.interval.ms=1000", "", func(c Config) bool { return c.Groups.OffsetsRetentionCheck == time.Second }},
	{"offsets.retention.check.interval.ms=0", "offsets.retention.check.interval.ms", nil},
	{"transaction.state.log.num.partitions=3\ntransaction.state.log.replication.factor=1", "", func(c Config) bool {
		return c.Txn.StateLogPartitions == 3 && c.Txn.StateLogReplicationFactor == 1
	}},
	{"transaction.state.log.num.partitions=0", "transaction.state.log.num.partitions", nil},
	{"transaction.max.timeout.ms=60000", "", func(c Config) bool { return c.Txn.MaxTimeout == time.Minute }},
	{"transaction.max.timeout.ms=0", "transaction.max.timeout.ms", nil},
	{"transactional.id.expiration.ms=1000", "", func(c Config) bool { return c.Txn.IDExpiration == time.Second }},
	{"transaction.state.log.min.isr=x", "transaction.state.log.min.isr", nil},
	{"log.cleanup.policy=delete", "", func(c Config) bool { return true }},
	{"log.cleanup.policy=compact", "", func(c Config) bool { return effectiveConfig(&c, nil).compaction.compact }},
	{"log.cleanup.policy=compact, delete", "", func(c Config) bool { cc := effectiveConfig(&c, nil).compaction; return cc.compact && cc.delete }},
	{"replica.lag.time.max.ms=1000", "", func(c Config) bool { return c.Replication.LagTimeMax == time.Second }},
	{"replica.lag.time.max.ms=0", "replica.lag.time.max.ms", nil},
	{"replica.fetch.wait.max.ms=100", "", func(c Config) bool { return c.Replication.FetchWaitMax == 100*time.Millisecond }},
	{"replica.fetch.max.bytes=-1", "replica.fetch.max.bytes", nil},
	{"replica.high.watermark.checkpoint.interval.ms=100", "", func(c Config) bool { return c.Replication.HighWatermarkCheckpointInterval == 100*time.Millisecond }},
	{"max.incremental.fetch.session.cache.slots=5", "", func(c Config) bool { return c.Replication.FetchSessionCacheSlots == 5 }},
	{"max.incremental.fetch.session.cache.slots=-1", "max.incremental.fetch.session.cache.slots", nil},
	{"replica.socket.timeout.ms=30000", "", func(c Config) bool { return c.Replication == DefaultReplicationConfig() }},
	{"broker.rack=us-east-1a", "", func(c Config) bool { return c.Rack == "us-east-1a" }},
	{"replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector", "", func(c Config) bool {
		return c.Replication.ReplicaSelector == RackAwareReplicaSelector
	}},
	{"replica.selector.class=com.example.Mine", "replica.selector.class", nil},
	{"replication.quota.window.num=5", "", func(c Config) bool { return c.Replication.QuotaWindows == 5 }},
	{"replication.quota.window.num=0", "replication.quota.window.num", nil},
	{"replication.quota.window.size.seconds=2", "", func(c Config) bool { return c.Replication.QuotaWindowSize == 2*time.Second }},
	{"log.cleaner.threads=2", "", func(c Config) bool { return c.Cleaner.Threads == 2 }},
	{"log.cleaner.threads=-1", "log.cleaner.threads", nil},
	{"log.cleaner.dedupe.buffer.size=10", "log.cleaner.dedupe.buffer.size", nil},
	{"log.cleaner.io.max.bytes.per.second=1e6", "", func(c Config) bool { return c.Cleaner.IOMaxBytesPerSecond == 1e6 }},
	{"log.cleaner.io.max.bytes.per.second=fast", "log.cleaner.io.max.bytes.per.second", nil},
	{"log.cleaner.min.cleanable.ratio=1.5", "log.cleaner.min.cleanable.ratio", nil},
	{"log.cleaner.delete.retention.ms=-1", "log.cleaner.delete.retention.ms", nil},
	{"log.cleaner.max.compaction.lag.ms=0", "log.cleaner.max.compaction.lag.ms", nil},
	{"log.cleanup.policy=shred", "log.cleanup.policy", nil},
	{"min.insync.replicas=2", "", func(c Config) bool {
		return findTopicConfigDef("min.insync.replicas").brokerDflt(&c) == "2"
	}},
	{"min.insync.replicas=0", "min.insync.replicas", nil},
	{"compression.type=producer", "", func(c Config) bool { return true }},
	{"compression.type=gzip", "compression.type", nil},
	{"unclean.leader.election.enable=true", "", func(c Config) bool {
		return findTopicConfigDef("unclean.leader.election.enable").brokerDflt(&c) == "true"
	}},
	{"unclean.leader.election.enable=yes", "unclean.leader.election.enable", nil},
	{"num.network.threads=3\nsocket.send.buffer.bytes=102400\nssl.keystore.location=/x\nlog.cleaner.enable=false", "", func(Config) bool { return true }},
	{"num.network.threads=three", "num.network.threads", nil},
	{"log.cleaner.enable=maybe", "log.cleaner.enable", nil},
}

func TestParsePropertiesValues(t *testing.T) {
	for _, tc := range brokerCases {
		var logs strings.Builder
		c, err := ParseProperties(strings.NewReader("# server.properties\n"+tc.lines+"\n"), slog.New(slog.NewTextHandler(&logs, nil)))
		var e *properties.Error
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%q: %v", tc.lines, err)
		case tc.bad == "" && strings.Contains(logs.String(), "level=WARN"):
			t.Errorf("%q: warned: %s", tc.lines, logs.String())
		case tc.bad == "" && !tc.check(c):
			t.Errorf("%q: parsed %+v", tc.lines, c)
		case tc.bad != "" && !errors.As(err, &e):
			t.Errorf("%q: err %v, want a *properties.Error", tc.lines, err)
		case tc.bad != "" && (e.Key != tc.bad || e.Line < 2 || strings.Contains(err.Error(), "\n")):
			t.Errorf("%q: error %q names key %q on line %d, want key %q", tc.lines, err, e.Key, e.Line, tc.bad)
		}
	}
}

func TestParsePropertiesWarnsUnknownKeysOnly(t *testing.T) {
	var logs strings.Builder
	_, err := ParseProperties(strings.NewReader("no.such.key=1\nnum.io.threads=8\n"), slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `level=WARN msg="server.properties: the configuration was supplied but isn't a known config" key=no.such.key line=1`) ||
		!strings.Contains(logs.String(), `level=DEBUG msg="server.properties: key accepted and ignored" key=num.io.threads`) ||
		strings.Count(logs.String(), "level=WARN") != 1 {
		t.Fatalf("logs:\n%s", logs.String())
	}
}

func TestParsePropertiesRelations(t *testing.T) {
	for _, tc := range []struct{ props, want string }{
		{"listeners=PLAINTEXT://:9092\nadvertised.listeners=OTHER://h:9092", "advertised.listeners"},
	} {
		_, err := ParseProperties(strings.NewReader(tc.props), nil)
		var e *properties.Error
		if !errors.As(err, &e) || e.Key != tc.want {
			t.Errorf("%q: err %v, want one about %s", tc.props, err, tc.want)
		}
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte("broker.id=0\nlog.segment.bytes=0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(path, nil)
	if err == nil || err.Error() != path+":2: log.segment.bytes=0: must be an integer from 14 to 2147483647" {
		t.Fatalf("err %v", err)
	}
}

// FuzzParseProperties: any server.properties text parses or fails with a
// one-line error, never a panic.
func FuzzParseProperties(f *testing.F) {
	for _, tc := range brokerCases {
		f.Add(tc.lines)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_, err := ParseProperties(strings.NewReader(text), nil)
		if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("%q: error %q", text, err)
		}
	})
}
