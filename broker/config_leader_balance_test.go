package broker

import (
	"strings"
	"testing"
	"time"
)

// TestLeaderBalanceConfig: Kafka's defaults, the three keys read, and
// bad values refused.
func TestLeaderBalanceConfig(t *testing.T) {
	cfg, err := ParseProperties(strings.NewReader("broker.id=1\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if lb := cfg.LeaderBalance; !lb.Enable || lb.CheckInterval != 300*time.Second || lb.PerBrokerPct != 10 {
		t.Fatalf("defaults: %+v", lb)
	}
	cfg, err = ParseProperties(strings.NewReader("auto.leader.rebalance.enable=false\n"+
		"leader.imbalance.check.interval.seconds=7\nleader.imbalance.per.broker.percentage=25\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if lb := cfg.LeaderBalance; lb.Enable || lb.CheckInterval != 7*time.Second || lb.PerBrokerPct != 25 {
		t.Fatalf("read: %+v", lb)
	}
	for _, bad := range []string{"auto.leader.rebalance.enable=maybe", "leader.imbalance.check.interval.seconds=0",
		"leader.imbalance.per.broker.percentage=ten"} {
		if _, err := ParseProperties(strings.NewReader(bad+"\n"), nil); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
