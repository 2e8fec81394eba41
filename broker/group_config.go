package broker

import (
	"math"
	"time"
)

// GroupConfig is the group coordinator's part of Config, named after
// Kafka's server.properties keys.
type GroupConfig struct {
	MinSessionTimeout      time.Duration // group.min.session.timeout.ms (6 s)
	MaxSessionTimeout      time.Duration // group.max.session.timeout.ms (30 min)
	InitialRebalanceDelay  time.Duration // group.initial.rebalance.delay.ms (3 s; 0 = none)
	MaxSize                int32         // group.max.size (0 = unlimited, Kafka's Int.MaxValue)
	OffsetMetadataMaxBytes int32         // offset.metadata.max.bytes (4096)
	OffsetsRetention       time.Duration // offsets.retention.minutes (7 days)
	OffsetsRetentionCheck  time.Duration // offsets.retention.check.interval.ms (10 min)

	OffsetsTopicPartitions        int32 // offsets.topic.num.partitions (50)
	OffsetsTopicReplicationFactor int16 // offsets.topic.replication.factor (3)
	OffsetsTopicSegmentBytes      int32 // offsets.topic.segment.bytes (100 MiB)
}

// DefaultGroupConfig is Kafka's defaults.
func DefaultGroupConfig() GroupConfig {
	return GroupConfig{
		MinSessionTimeout:      6 * time.Second,
		MaxSessionTimeout:      30 * time.Minute,
		InitialRebalanceDelay:  3 * time.Second,
		OffsetMetadataMaxBytes: 4096,
		OffsetsRetention:       7 * 24 * time.Hour,
		OffsetsRetentionCheck:  10 * time.Minute,

		OffsetsTopicPartitions:        50,
		OffsetsTopicReplicationFactor: 3,
		OffsetsTopicSegmentBytes:      100 << 20,
	}
}

// fillDefaults replaces unset (zero) durations and sizes by Kafka's
// defaults; InitialRebalanceDelay and MaxSize keep 0.
func (g *GroupConfig) fillDefaults() {
	d := DefaultGroupConfig()
	if g.MinSessionTimeout <= 0 {
		g.MinSessionTimeout = d.MinSessionTimeout
	}
	if g.MaxSessionTimeout <= 0 {
		g.MaxSessionTimeout = d.MaxSessionTimeout
	}
	if g.OffsetMetadataMaxBytes <= 0 {
		g.OffsetMetadataMaxBytes = d.OffsetMetadataMaxBytes
	}
	if g.OffsetsRetention <= 0 {
		g.OffsetsRetention = d.OffsetsRetention
	}
	if g.OffsetsRetentionCheck <= 0 {
		g.OffsetsRetentionCheck = d.OffsetsRetentionCheck
	}
	if g.OffsetsTopicPartitions <= 0 {
		g.OffsetsTopicPartitions = d.OffsetsTopicPartitions
	}
	if g.OffsetsTopicReplicationFactor <= 0 {
		g.OffsetsTopicReplicationFactor = d.OffsetsTopicReplicationFactor
	}
	if g.OffsetsTopicSegmentBytes <= 0 {
		g.OffsetsTopicSegmentBytes = d.OffsetsTopicSegmentBytes
	}
}

// parseProperty applies one server.properties key; ok reports whether
// the key belongs to the group coordinator. Values are checked with
// Kafka's rules, and kept from the 0s that fillDefaults would replace.
func (g *GroupConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "group.min.session.timeout.ms":
		err = millisIn(v, 1, math.MaxInt32, &g.MinSessionTimeout)
	case "group.max.session.timeout.ms":
		err = millisIn(v, 1, math.MaxInt32, &g.MaxSessionTimeout)
	case "group.initial.rebalance.delay.ms":
		err = millisIn(v, 0, math.MaxInt32, &g.InitialRebalanceDelay)
	case "group.max.size":
		err = intIn(v, 1, math.MaxInt32, &g.MaxSize)
	case "offset.metadata.max.bytes":
		err = intIn(v, 1, math.MaxInt32, &g.OffsetMetadataMaxBytes)
	case "offsets.retention.minutes":
		var n int64
		err = intIn(v, 1, math.MaxInt32, &n)
		g.OffsetsRetention = durationOf(n, time.Minute)
	case "offsets.retention.check.interval.ms":
		err = millisIn(v, 1, math.MaxInt64, &g.OffsetsRetentionCheck)
	case "offsets.topic.num.partitions":
		err = intIn(v, 1, math.MaxInt32, &g.OffsetsTopicPartitions)
	case "offsets.topic.replication.factor":
		err = intIn(v, 1, math.MaxInt16, &g.OffsetsTopicReplicationFactor)
	case "offsets.topic.segment.bytes":
		err = intIn(v, 1, math.MaxInt32, &g.OffsetsTopicSegmentBytes)
	default:
		return false, nil
	}
	return true, err
}
