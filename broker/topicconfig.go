package broker

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/broker/replica"
	"github.com/zkafka/zkafka/store/segment"
)

// Per-topic configuration (/config/topics/{topic}). The keys that change
// behaviour are in topicConfigDefs; any other key Kafka knows is accepted
// and stored (so tools round-trip them) but has no effect.
//
// cleanup.policy is a list of "delete" and "compact" (cleaner.go): a
// compacted topic's closed segments are cleaned by the log cleaner, and
// retention deletes segments only when the list has "delete".

// topicConfigDef describes one topic config key: the broker property that
// supplies its default and a validator.
type topicConfigDef struct {
	name       string
	brokerKey  string
	brokerDflt func(c *Config) string
	check      func(v string) error
}

var topicConfigDefs = []topicConfigDef{
	{"cleanup.policy", "log.cleanup.policy", storedDefault("cleanup.policy"), checkCleanupPolicy},
	{"retention.ms", "log.retention.ms", func(c *Config) string { return durMs(c.LogRetention) }, checkInt(-1, math.MaxInt64)},
	{"retention.bytes", "log.retention.bytes", func(c *Config) string { return strconv.FormatInt(c.LogRetentionBytes, 10) }, checkInt(-1, math.MaxInt64)},
	{"segment.bytes", "log.segment.bytes", func(c *Config) string { return strconv.FormatInt(c.LogSegmentBytes, 10) }, checkInt(14, math.MaxInt32)},
	{"segment.ms", "log.roll.ms", func(c *Config) string { return durMs(c.LogRollTime) }, checkInt(1, math.MaxInt64)},
	{"max.message.bytes", "message.max.bytes", func(c *Config) string { return strconv.Itoa(int(c.MessageMaxBytes)) }, checkInt(0, math.MaxInt32)},
	{"message.timestamp.type", "log.message.timestamp.type", func(c *Config) string { return c.LogMessageTimestampType }, checkTimestampType},
	{"flush.messages", "log.flush.interval.messages", func(c *Config) string { return flushMessages(c) }, checkInt(1, math.MaxInt64)},
	{"flush.ms", "log.flush.interval.ms", func(c *Config) string { return flushMs(c) }, checkInt(0, math.MaxInt64)},
	{"min.insync.replicas", "min.insync.replicas", storedDefault("min.insync.replicas"), checkInt(1, math.MaxInt32)},
	{"compression.type", "compression.type", storedDefault("compression.type"), checkCompression},
	{"unclean.leader.election.enable", "unclean.leader.election.enable", storedDefault("unclean.leader.election.enable"), checkBool},
	{"delete.retention.ms", "log.cleaner.delete.retention.ms", storedDefault("delete.retention.ms"), checkInt(0, math.MaxInt64)},
	{"min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio", storedDefault("min.cleanable.dirty.ratio"), checkRatio},
	{"min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms", storedDefault("min.compaction.lag.ms"), checkInt(0, math.MaxInt64)},
	{"max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", storedDefault("max.compaction.lag.ms"), checkInt(1, math.MaxInt64)},
	// The replication throttles' partitions (throttle.go) have no broker
	// key: their default is the empty list.
	{"leader.replication.throttled.replicas", "", noBrokerDefault, replica.CheckThrottledReplicas},
	{"follower.replication.throttled.replicas", "", noBrokerDefault, replica.CheckThrottledReplicas},
}

// noBrokerDefault is the brokerDflt of a topic config without a broker
// key: Kafka's default, the empty string.
func noBrokerDefault(*Config) string { return "" }

// storedTopicDefaults are the Kafka defaults of the topic configs that
// Config has no field for; server.properties may set them under their
// broker keys (Config.topicDefaults).
var storedTopicDefaults = map[string]string{
	"cleanup.policy": "delete", "min.insync.replicas": "1", "compression.type": "producer",
	"unclean.leader.election.enable": "false",
	"delete.retention.ms":            "86400000", "min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": "0",
	"max.compaction.lag.ms": strconv.FormatInt(math.MaxInt64, 10),
}

// storedDefault is the brokerDflt of such a topic config.
func storedDefault(name string) func(c *Config) string {
	return func(c *Config) string {
		if v, ok := c.topicDefaults[name]; ok {
			return v
		}
		return storedTopicDefaults[name]
	}
}

// topicDefaultForBrokerKey is the topic config whose broker default the
// server.properties key k sets, when Config has no field for it (nil
// otherwise).
func topicDefaultForBrokerKey(k string) *topicConfigDef {
	for i := range topicConfigDefs {
		if d := &topicConfigDefs[i]; k != "" && d.brokerKey == k && storedTopicDefaults[d.name] != "" {
			return d
		}
	}
	return nil
}

func findTopicConfigDef(name string) *topicConfigDef {
	for i := range topicConfigDefs {
		if topicConfigDefs[i].name == name {
			return &topicConfigDefs[i]
		}
	}
	return nil
}

func durMs(d time.Duration) string {
	if d < 0 {
		return "-1"
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}

func flushMessages(c *Config) string {
	if c.LogFlushIntervalMessages <= 0 {
		return strconv.FormatInt(math.MaxInt64, 10)
	}
	return strconv.FormatInt(c.LogFlushIntervalMessages, 10)
}

func flushMs(c *Config) string {
	if c.LogFlushInterval <= 0 {
		return strconv.FormatInt(math.MaxInt64, 10)
	}
	return durMs(c.LogFlushInterval)
}

func checkInt(lo, hi int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", v)
		}
		if n < lo || n > hi {
			return fmt.Errorf("%d is outside [%d, %d]", n, lo, hi)
		}
		return nil
	}
}

// checkBool is Kafka's BOOLEAN: true or false in any case.
func checkBool(v string) error {
	if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		return fmt.Errorf("%q is not true or false", v)
	}
	return nil
}

// checkCleanupPolicy is Kafka's ValidList.in("compact", "delete"): a
// comma-separated list (blanks around the commas ignored) of those words.
func checkCleanupPolicy(v string) error {
	_, _, err := parseCleanupPolicy(v)
	return err
}

// parseCleanupPolicy returns whether the policy compacts and deletes.
func parseCleanupPolicy(v string) (compact, del bool, err error) {
	for _, w := range strings.Split(v, ",") {
		switch strings.TrimSpace(w) {
		case "compact":
			compact = true
		case "delete":
			del = true
		default:
			return false, false, fmt.Errorf("%q is not a valid cleanup.policy: a list of \"compact\" and \"delete\"", v)
		}
	}
	return compact, del, nil
}

// checkRatio is a DOUBLE in [0, 1] (min.cleanable.dirty.ratio).
func checkRatio(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || f > 1 {
		return fmt.Errorf("%q is not a number in [0, 1]", v)
	}
	return nil
}

func checkTimestampType(v string) error {
	if v != "CreateTime" && v != "LogAppendTime" {
		return fmt.Errorf("%q is not CreateTime or LogAppendTime", v)
	}
	return nil
}

func checkCompression(v string) error {
	switch v {
	case "producer", "uncompressed", "gzip", "snappy", "lz4", "zstd":
		if v != "producer" {
			return fmt.Errorf("compression.type=%s is not supported: zkafka stores batches as the producer sent them", v)
		}
		return nil
	}
	return fmt.Errorf("%q is not a valid compression.type", v)
}

// validateTopicConfigs checks overrides for CreateTopics and
// AlterConfigs. Unknown keys are an error, as in Kafka.
func validateTopicConfigs(overrides map[string]string) error {
	for k, v := range overrides {
		d := findTopicConfigDef(k)
		if d == nil {
			return fmt.Errorf("unknown topic config %q", k)
		}
		if err := d.check(v); err != nil {
			return fmt.Errorf("invalid value for %s: %v", k, err)
		}
	}
	return checkCompactionLags(overrides)
}

// topicConfig is the effective configuration of a topic: broker defaults
// with the topic's overrides applied.
type topicConfig struct {
	fs             segment.FS // Config.LogFS
	overrides      map[string]string
	retention      time.Duration // <0 forever
	retentionBytes int64         // <0 unlimited
	segmentBytes   int64
	segmentAge     time.Duration
	maxMessage     int32
	logAppendTime  bool
	flushMessages  int64 // 0 = never by count
	flushInterval  time.Duration
	compaction     compactionConfig // cleaner_config.go
	// leaderThrottled and followerThrottled are the partitions this
	// broker throttles as leader and as follower (throttle.go).
	leaderThrottled, followerThrottled replica.Throttled
}

// effectiveConfig combines c's defaults with overrides (already validated).
func effectiveConfig(c *Config, overrides map[string]string) *topicConfig {
	get := func(name string) string {
		if v, ok := overrides[name]; ok {
			return v
		}
		return findTopicConfigDef(name).dflt(c)
	}
	num := func(name string) int64 {
		n, _ := strconv.ParseInt(get(name), 10, 64)
		return n
	}
	tc := &topicConfig{
		fs:             c.LogFS,
		overrides:      overrides,
		retentionBytes: num("retention.bytes"),
		segmentBytes:   num("segment.bytes"),
		segmentAge:     time.Duration(num("segment.ms")) * time.Millisecond,
		maxMessage:     int32(num("max.message.bytes")),
		logAppendTime:  get("message.timestamp.type") == "LogAppendTime",
	}
	if ms := num("retention.ms"); ms < 0 {
		tc.retention = -1
	} else {
		tc.retention = time.Duration(ms) * time.Millisecond
	}
	if n := num("flush.messages"); n != math.MaxInt64 {
		tc.flushMessages = n
	}
	if n := num("flush.ms"); n != math.MaxInt64 {
		tc.flushInterval = time.Duration(n) * time.Millisecond
	}
	tc.compaction = parseCompaction(get)
	tc.leaderThrottled = replica.ParseThrottledReplicas(get("leader.replication.throttled.replicas"), c.BrokerID)
	tc.followerThrottled = replica.ParseThrottledReplicas(get("follower.replication.throttled.replicas"), c.BrokerID)
	return tc
}

// writebackBytes is the partition logs' segment.Options.WritebackBytes:
// the appender starts the disk writes of every 8 MiB it appended, so that
// the fsync at a segment roll (inside the produce that rolls it) waits
// for the last few MiB instead of a whole 1 GiB segment (0.4 s here).
const writebackBytes = 8 << 20

// segmentOptions turns the topic config into the log's options.
func (tc *topicConfig) segmentOptions() segment.Options {
	o := segment.Options{
		FS:             tc.fs,
		SegmentBytes:   tc.segmentBytes,
		SegmentAge:     tc.segmentAge,
		FlushEntries:   tc.flushMessages,
		WritebackBytes: writebackBytes,
	}
	if tc.flushInterval > 0 {
		o.FlushInterval = tc.flushInterval
	}
	if tc.retention > 0 && tc.compaction.delete {
		o.RetentionAge = tc.retention
	}
	if tc.retentionBytes > 0 && tc.compaction.delete {
		o.RetentionBytes = tc.retentionBytes
	}
	return o
}

func joinComma(a []string) string {
	s := ""
	for i, v := range a {
		if i > 0 {
			s += ","
		}
		s += v
	}
	return s
}
