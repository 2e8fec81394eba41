package broker

import (
	"fmt"
	"math"
	"time"
)

// ReplicationConfig is the replica manager's part of Config: Kafka's
// replica.* keys, with Kafka's defaults. Followers fetch from leaders,
// and leaders reach the controller, on the inter-broker listener
// (Config.InterBroker, config_interbroker.go).
type ReplicationConfig struct {
	// LagTimeMax is replica.lag.time.max.ms (30 s): a follower that has
	// not caught up with the leader's log end for that long leaves the ISR.
	LagTimeMax time.Duration
	// FetchWaitMax is replica.fetch.wait.max.ms (500 ms), the long poll
	// of a follower's fetch.
	FetchWaitMax time.Duration
	// FetchBackoff is replica.fetch.backoff.ms (1 s): the pause after a
	// failed fetch.
	FetchBackoff time.Duration
	// FetchMaxBytes is replica.fetch.max.bytes (1 MiB), per partition;
	// FetchResponseMaxBytes replica.fetch.response.max.bytes (10 MiB).
	FetchMaxBytes, FetchResponseMaxBytes int32
	// HighWatermarkCheckpointInterval is
	// replica.high.watermark.checkpoint.interval.ms (5 s).
	HighWatermarkCheckpointInterval time.Duration
	// FetchSessionCacheSlots is max.incremental.fetch.session.cache.slots
	// (1000): how many fetch sessions (fetch_session.go) the broker keeps,
	// followers' and consumers'.
	FetchSessionCacheSlots int32
	// ReplicaSelector is replica.selector.class: "" (Kafka's default:
	// consumers read from leaders only) or RackAwareReplicaSelector
	// (KIP-392, fetch_replica.go).
	ReplicaSelector string
	// QuotaWindows and QuotaWindowSize are replication.quota.window.num
	// (11) and replication.quota.window.size.seconds (1 s): the samples
	// the replication throttles measure rates over (throttle.go).
	QuotaWindows    int32
	QuotaWindowSize time.Duration
}

// RackAwareReplicaSelector is the one replica.selector.class served.
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

// DefaultReplicationConfig is Kafka's defaults.
func DefaultReplicationConfig() ReplicationConfig {
	return ReplicationConfig{LagTimeMax: 30 * time.Second,
		FetchWaitMax: 500 * time.Millisecond, FetchBackoff: time.Second, FetchMaxBytes: 1 << 20,
		FetchResponseMaxBytes: 10 << 20, HighWatermarkCheckpointInterval: 5 * time.Second,
		FetchSessionCacheSlots: 1000, QuotaWindows: 11, QuotaWindowSize: time.Second}
}

// parseProperty applies one replication key; ok reports whether it is one.
// Types and ranges are Kafka's (KafkaConfig: LONG / INT, atLeast(0) for
// the byte sizes).
func (c *ReplicationConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "replica.lag.time.max.ms":
		err = millisIn(v, 1, math.MaxInt64, &c.LagTimeMax)
	case "replica.fetch.wait.max.ms":
		err = millisIn(v, 0, math.MaxInt32, &c.FetchWaitMax)
	case "replica.fetch.backoff.ms":
		err = millisIn(v, 0, math.MaxInt32, &c.FetchBackoff)
	case "replica.fetch.max.bytes":
		err = intIn(v, 0, math.MaxInt32, &c.FetchMaxBytes)
	case "replica.fetch.response.max.bytes":
		err = intIn(v, 0, math.MaxInt32, &c.FetchResponseMaxBytes)
	case "replica.high.watermark.checkpoint.interval.ms":
		err = millisIn(v, 1, math.MaxInt64, &c.HighWatermarkCheckpointInterval)
	case "max.incremental.fetch.session.cache.slots":
		err = intIn(v, 0, math.MaxInt32, &c.FetchSessionCacheSlots)
	case "replica.selector.class":
		if v != "" && v != RackAwareReplicaSelector {
			err = fmt.Errorf("replica.selector.class %q is not served: only %s (or none)", v, RackAwareReplicaSelector)
		}
		c.ReplicaSelector = v
	case "replication.quota.window.num":
		err = intIn(v, 1, math.MaxInt32, &c.QuotaWindows)
	case "replication.quota.window.size.seconds":
		var secs int32
		err = intIn(v, 1, math.MaxInt32, &secs)
		c.QuotaWindowSize = time.Duration(secs) * time.Second
	default:
		return false, nil
	}
	return true, err
}
