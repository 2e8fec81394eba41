package broker

import (
	"math"
	"time"
)

// TxnConfig is the transaction coordinator's part of Config, named after
// Kafka's server.properties keys.
type TxnConfig struct {
	StateLogPartitions        int32         // transaction.state.log.num.partitions (50)
	StateLogReplicationFactor int16         // transaction.state.log.replication.factor (3; capped at the live brokers)
	StateLogMinISR            int32         // transaction.state.log.min.isr (2; capped at the replication factor)
	StateLogSegmentBytes      int32         // transaction.state.log.segment.bytes (100 MiB)
	MaxTimeout                time.Duration // transaction.max.timeout.ms (15 min)
	IDExpiration              time.Duration // transactional.id.expiration.ms (7 days)
	// AbortCheck is transaction.abort.timed.out.transaction.cleanup.interval.ms
	// (10 s): how often timed-out transactions are looked for; expired ids
	// are looked for every transaction.remove.expired.transaction.cleanup.interval.ms
	// (1 h), RemoveCheck.
	AbortCheck  time.Duration
	RemoveCheck time.Duration
}

// DefaultTxnConfig is Kafka's defaults.
func DefaultTxnConfig() TxnConfig {
	return TxnConfig{StateLogPartitions: 50, StateLogReplicationFactor: 3, StateLogMinISR: 2,
		StateLogSegmentBytes: 100 << 20, MaxTimeout: 15 * time.Minute, IDExpiration: 7 * 24 * time.Hour,
		AbortCheck: 10 * time.Second, RemoveCheck: time.Hour}
}

// fillDefaults replaces unset (zero) values by Kafka's defaults.
func (c *TxnConfig) fillDefaults() {
	d := DefaultTxnConfig()
	if c.StateLogPartitions <= 0 {
		c.StateLogPartitions = d.StateLogPartitions
	}
	if c.StateLogReplicationFactor <= 0 {
		c.StateLogReplicationFactor = d.StateLogReplicationFactor
	}
	if c.StateLogMinISR <= 0 {
		c.StateLogMinISR = d.StateLogMinISR
	}
	if c.StateLogSegmentBytes <= 0 {
		c.StateLogSegmentBytes = d.StateLogSegmentBytes
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = d.MaxTimeout
	}
	if c.IDExpiration <= 0 {
		c.IDExpiration = d.IDExpiration
	}
	if c.AbortCheck <= 0 {
		c.AbortCheck = d.AbortCheck
	}
	if c.RemoveCheck <= 0 {
		c.RemoveCheck = d.RemoveCheck
	}
}

// parseProperty applies one server.properties key; ok reports whether
// the key belongs to the transaction coordinator.
func (c *TxnConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "transaction.state.log.num.partitions":
		err = intIn(v, 1, math.MaxInt32, &c.StateLogPartitions)
	case "transaction.state.log.replication.factor":
		err = intIn(v, 1, math.MaxInt16, &c.StateLogReplicationFactor)
	case "transaction.state.log.min.isr":
		err = intIn(v, 1, math.MaxInt32, &c.StateLogMinISR)
	case "transaction.state.log.segment.bytes":
		err = intIn(v, 1, math.MaxInt32, &c.StateLogSegmentBytes)
	case "transaction.max.timeout.ms":
		err = millisIn(v, 1, math.MaxInt32, &c.MaxTimeout)
	case "transactional.id.expiration.ms":
		err = millisIn(v, 1, math.MaxInt32, &c.IDExpiration)
	case "transaction.abort.timed.out.transaction.cleanup.interval.ms":
		err = millisIn(v, 1, math.MaxInt32, &c.AbortCheck)
	case "transaction.remove.expired.transaction.cleanup.interval.ms":
		err = millisIn(v, 1, math.MaxInt32, &c.RemoveCheck)
	default:
		return false, nil
	}
	return true, err
}
