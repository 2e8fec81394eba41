package broker

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// compactionConfig is the log cleaner's part of a topic's effective
// config.
type compactionConfig struct {
	compact         bool          // cleanup.policy has "compact"
	delete          bool          // cleanup.policy has "delete": retention applies
	deleteRetention time.Duration // delete.retention.ms
	minRatio        float64       // min.cleanable.dirty.ratio
	minLag, maxLag  time.Duration // min/max.compaction.lag.ms
}

// parseCompaction reads the (validated) compaction keys through get.
func parseCompaction(get func(name string) string) compactionConfig {
	var c compactionConfig
	c.compact, c.delete, _ = parseCleanupPolicy(get("cleanup.policy"))
	ms := func(name string) time.Duration {
		n, _ := strconv.ParseInt(get(name), 10, 64)
		return durationOf(n, time.Millisecond)
	}
	c.deleteRetention, c.minLag, c.maxLag = ms("delete.retention.ms"), ms("min.compaction.lag.ms"), ms("max.compaction.lag.ms")
	c.minRatio, _ = strconv.ParseFloat(strings.TrimSpace(get("min.cleanable.dirty.ratio")), 64)
	return c
}

// checkCompactionLags is Kafka's LogConfig.validateValues check that
// min.compaction.lag.ms is not above max.compaction.lag.ms, for the
// overrides given together.
func checkCompactionLags(overrides map[string]string) error {
	lo, ok1 := overrides["min.compaction.lag.ms"]
	hi, ok2 := overrides["max.compaction.lag.ms"]
	if !ok1 || !ok2 {
		return nil
	}
	a, _ := strconv.ParseInt(lo, 10, 64)
	b, _ := strconv.ParseInt(hi, 10, 64)
	if a > b {
		return fmt.Errorf("conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", a, b)
	}
	return nil
}

// CleanerConfig is the log cleaner's part of Config (log.cleaner.*; the
// per-topic defaults log.cleaner.delete.retention.ms,
// log.cleaner.min.cleanable.ratio and log.cleaner.{min,max}.compaction.lag.ms
// are topic config defaults, topicconfig.go).
type CleanerConfig struct {
	Enable bool // log.cleaner.enable (true)
	// Threads is log.cleaner.threads (1); 0 runs no cleaner.
	Threads int32
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size (128 MiB), the
	// offset maps of all threads together.
	DedupeBufferSize int64
	// IOMaxBytesPerSecond is log.cleaner.io.max.bytes.per.second (no
	// limit): all threads' reads and writes together.
	IOMaxBytesPerSecond float64
	// Backoff is log.cleaner.backoff.ms (15 s): a thread's sleep when no
	// log needs cleaning.
	Backoff time.Duration
}

// DefaultCleanerConfig is Kafka's defaults.
func DefaultCleanerConfig() CleanerConfig {
	return CleanerConfig{Enable: true, Threads: 1, DedupeBufferSize: 128 << 20,
		IOMaxBytesPerSecond: math.MaxFloat64, Backoff: 15 * time.Second}
}

// parseProperty applies one server.properties key of the cleaner; ok
// reports whether the key is one. Types and ranges are Kafka's
// (KafkaConfig: threads INT atLeast(0), backoff LONG atLeast(0), dedupe
// buffer LONG, io rate DOUBLE), and zkafka also refuses a dedupe buffer
// too small for one offset map slot per thread, which Kafka only finds
// when the cleaner starts.
func (c *CleanerConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "log.cleaner.enable":
		c.Enable, err = strconv.ParseBool(strings.ToLower(v))
		if err != nil || (strings.ToLower(v) != "true" && strings.ToLower(v) != "false") {
			err = fmt.Errorf("must be true or false")
		}
	case "log.cleaner.threads":
		err = intIn(v, 0, math.MaxInt32, &c.Threads)
	case "log.cleaner.dedupe.buffer.size":
		err = intIn(v, 48, math.MaxInt64, &c.DedupeBufferSize)
	case "log.cleaner.io.max.bytes.per.second":
		c.IOMaxBytesPerSecond, err = strconv.ParseFloat(v, 64)
		if err != nil {
			err = fmt.Errorf("must be a number")
		}
	case "log.cleaner.backoff.ms":
		err = millisIn(v, 0, math.MaxInt64, &c.Backoff)
	default:
		return false, nil
	}
	return true, err
}

// validate checks what involves several keys.
func (c *CleanerConfig) validate() error {
	if c.Enable && c.Threads > 0 && c.DedupeBufferSize/int64(c.Threads) < 2*24 {
		return fmt.Errorf("log.cleaner.dedupe.buffer.size (%d) leaves the %d cleaner threads less than 48 bytes each", c.DedupeBufferSize, c.Threads)
	}
	return nil
}
