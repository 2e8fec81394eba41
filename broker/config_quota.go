package broker

import (
	"math"
	"time"
)

// QuotaConfig is the window client quotas are measured over (Kafka's
// quota.window.num and quota.window.size.seconds; the quotas themselves
// are set with AlterClientQuotas and live in ZooKeeper, quota_store.go).
type QuotaConfig struct {
	WindowNum  int           // quota.window.num (11): samples kept
	WindowSize time.Duration // quota.window.size.seconds (1 s): each sample's span
}

// DefaultQuotaConfig is Kafka's defaults.
func DefaultQuotaConfig() QuotaConfig { return QuotaConfig{WindowNum: 11, WindowSize: time.Second} }

// parseProperty reads one of the quota window keys; ok is false for other
// keys.
func (q *QuotaConfig) parseProperty(k, v string) (ok bool, err error) {
	switch k {
	case "quota.window.num":
		var n int32
		err = intIn(v, 1, math.MaxInt32, &n)
		q.WindowNum = int(n)
		return true, err
	case "quota.window.size.seconds":
		var n int32
		err = intIn(v, 1, math.MaxInt32, &n)
		q.WindowSize = time.Duration(n) * time.Second
		return true, err
	}
	return false, nil
}
