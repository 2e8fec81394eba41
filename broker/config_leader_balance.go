package broker

import (
	"math"
	"strconv"
	"time"
)

// LeaderBalanceConfig is the controller's leader-balance check (Kafka's
// auto-leader-rebalance-task): auto.leader.rebalance.enable,
// leader.imbalance.check.interval.seconds and
// leader.imbalance.per.broker.percentage; decided in
// broker/controller/preferred.go.
type LeaderBalanceConfig struct {
	Enable        bool          // auto.leader.rebalance.enable (true)
	CheckInterval time.Duration // leader.imbalance.check.interval.seconds (300)
	PerBrokerPct  int32         // leader.imbalance.per.broker.percentage (10)
}

// DefaultLeaderBalanceConfig is Kafka's defaults.
func DefaultLeaderBalanceConfig() LeaderBalanceConfig {
	return LeaderBalanceConfig{Enable: true, CheckInterval: 300 * time.Second, PerBrokerPct: 10}
}

func (c *LeaderBalanceConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "auto.leader.rebalance.enable":
		c.Enable, err = strconv.ParseBool(v)
	case "leader.imbalance.check.interval.seconds":
		var s int64
		if err = intIn(v, 1, math.MaxInt32, &s); err == nil {
			c.CheckInterval = time.Duration(s) * time.Second
		}
	case "leader.imbalance.per.broker.percentage":
		err = intIn(v, math.MinInt32, math.MaxInt32, &c.PerBrokerPct) // no range in Kafka
	default:
		return false, nil
	}
	return true, err
}
