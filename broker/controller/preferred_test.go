package controller

import (
	"fmt"
	"testing"
)

// TestRebalanceThreshold: the balance check elects only for a broker
// whose share of partitions led elsewhere is above the percentage (Kafka
// compares imbalanceRatio > percentage/100, strictly).
func TestRebalanceThreshold(t *testing.T) {
	for _, tc := range []struct {
		off, total, pct int
		want            int
	}{
		{1, 10, 10, 0}, // 10% is not above 10%
		{2, 10, 10, 2},
		{1, 10, 5, 1},
		{0, 10, 0, 0},
		{3, 3, 100, 0},
	} {
		c := NewCore(Config{ImbalancePercentage: tc.pct})
		c.active = true
		c.live = map[int32]int64{1: 1, 2: 2}
		for i := 0; i < tc.total; i++ {
			leader := int32(1)
			if i < tc.off {
				leader = 2
			}
			c.parts[PartitionID{"t", int32(i)}] = &Partition{Replicas: []int32{1, 2}, HasState: true,
				State: LeaderAndISR{Leader: leader, ISR: []int32{1, 2}}}
		}
		eff := c.Step(RebalanceCheck{})
		if fmt.Sprint(len(eff.Writes)) != fmt.Sprint(tc.want) {
			t.Errorf("%d of %d led elsewhere, %d%%: %d elections, want %d", tc.off, tc.total, tc.pct, len(eff.Writes), tc.want)
		}
	}
}
