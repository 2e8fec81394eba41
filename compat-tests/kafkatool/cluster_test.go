package kafkatool

import (
	"strings"
	"testing"
)

func TestCluster(t *testing.T) {
	e := startEnv(t)
	h := decode[struct {
		Controller      int32  `json:"controller"`
		ControllerEpoch *int64 `json:"controller_epoch"`
		Brokers         []struct {
			ID         int32 `json:"id"`
			Controller bool  `json:"controller"`
		} `json:"brokers"`
		ZooKeeper []struct {
			Mode string `json:"mode"`
		} `json:"zookeeper"`
		UnderReplicated []any `json:"under_replicated"`
		Offline         []any `json:"offline"`
	}](t, run(t, "", "cluster", "--zookeeper", zkSpec(e), "-o", "json"))
	if len(h.Brokers) != 1 || !h.Brokers[0].Controller || h.Controller != h.Brokers[0].ID {
		t.Errorf("brokers %+v, controller %d", h.Brokers, h.Controller)
	}
	if h.ControllerEpoch == nil || *h.ControllerEpoch < 1 {
		t.Errorf("controller epoch %v", h.ControllerEpoch)
	}
	if len(h.ZooKeeper) != 1 || h.ZooKeeper[0].Mode != "standalone" {
		t.Errorf("zookeeper %+v", h.ZooKeeper)
	}
	if len(h.UnderReplicated)+len(h.Offline) != 0 {
		t.Errorf("unhealthy partitions on a healthy cluster: %+v", h)
	}
	if out := run(t, "", "cluster", "--bootstrap-server", e.Addr); !strings.Contains(out, "controller") || !strings.Contains(out, "0 offline") {
		t.Errorf("cluster table:\n%s", out)
	}
}

func TestBench(t *testing.T) {
	e := startEnv(t)
	bs := []string{"--bootstrap-server", e.Addr}
	run(t, "", append([]string{"topics", "create", "b", "--partitions", "2"}, bs...)...)
	type sum struct {
		Op      string  `json:"op"`
		Records int64   `json:"records"`
		Rate    float64 `json:"records_per_sec"`
		P50     float64 `json:"p50_ms"`
		P99     float64 `json:"p99_ms"`
		Max     float64 `json:"max_ms"`
	}
	p := decode[sum](t, run(t, "", append([]string{"bench", "produce", "b", "--records", "500", "--record-size", "64", "-o", "json"}, bs...)...))
	if p.Records != 500 || p.Rate <= 0 || p.Max < p.P99 || p.P99 < p.P50 {
		t.Errorf("bench produce %+v", p)
	}
	c := decode[sum](t, run(t, "", append([]string{"bench", "consume", "b", "--records", "500", "-o", "json"}, bs...)...))
	if c.Records != 500 || c.Rate <= 0 {
		t.Errorf("bench consume %+v", c)
	}
	zs := decode[[]sum](t, run(t, "", "bench", "zk", "--zookeeper", zkSpec(e), "--records", "20", "--throughput", "2000", "-o", "json"))
	if len(zs) != 4 {
		t.Fatalf("bench zk %+v", zs)
	}
	for _, s := range zs {
		if s.Records != 20 {
			t.Errorf("bench zk %s: %+v", s.Op, s)
		}
	}
	// --throughput paces: 30 records at 100/s cannot take less than 0.29 s.
	slow := decode[struct {
		Records int64   `json:"records"`
		Seconds float64 `json:"seconds"`
	}](t, run(t, "", append([]string{"bench", "produce", "b", "--records", "30", "--throughput", "100", "-o", "json"}, bs...)...))
	if slow.Records != 30 || slow.Seconds < 0.29 {
		t.Errorf("--throughput 100: %+v", slow)
	}
	if out := run(t, "", append([]string{"bench", "produce", "b", "--records", "10"}, bs...)...); !strings.Contains(out, "P99") {
		t.Errorf("bench table:\n%s", out)
	}
}
