package kafkatool

import (
	"strings"
	"testing"
)

type topicJSON struct {
	Name       string            `json:"name"`
	Partitions []partJSON        `json:"partitions"`
	Configs    map[string]string `json:"configs"`
}

type partJSON struct {
	Partition int32   `json:"partition"`
	Leader    int32   `json:"leader"`
	Replicas  []int32 `json:"replicas"`
	ISR       []int32 `json:"isr"`
}

func TestTopics(t *testing.T) {
	e := startEnv(t)
	bs := []string{"--bootstrap-server", e.Addr}
	run(t, "", append([]string{"topics", "create", "orders", "--partitions", "3", "--replication-factor", "1",
		"--config", "retention.ms=3600000"}, bs...)...)
	list := decode[[]struct {
		Name       string `json:"name"`
		Partitions int    `json:"partitions"`
	}](t, run(t, "", append([]string{"topics", "list", "-o", "json"}, bs...)...))
	if len(list) != 1 || list[0].Name != "orders" || list[0].Partitions != 3 {
		t.Fatalf("list: %+v", list)
	}
	// The table is for people: a header and the topic.
	if out := run(t, "", "topics", "list", "--zookeeper", zkSpec(e)); !strings.Contains(out, "TOPIC") || !strings.Contains(out, "orders") {
		t.Errorf("list table (brokers found through ZooKeeper):\n%s", out)
	}
	d := decode[[]topicJSON](t, run(t, "", append([]string{"topics", "describe", "orders", "-o", "json"}, bs...)...))
	if len(d) != 1 || len(d[0].Partitions) != 3 || d[0].Configs["retention.ms"] != "3600000" {
		t.Fatalf("describe: %+v", d)
	}
	for _, p := range d[0].Partitions {
		if p.Leader < 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
			t.Errorf("partition %+v", p)
		}
	}
	for _, filter := range []string{"--under-replicated", "--unavailable"} {
		if got := decode[[]topicJSON](t, run(t, "", append([]string{"topics", "describe", filter, "-o", "json"}, bs...)...)); len(got) != 0 {
			t.Errorf("describe %s on a healthy cluster: %+v", filter, got)
		}
	}
	run(t, "", append([]string{"topics", "alter", "orders", "--partitions", "5"}, bs...)...)
	d = decode[[]topicJSON](t, run(t, "", append([]string{"topics", "describe", "orders", "-o", "json"}, bs...)...))
	if len(d[0].Partitions) != 5 {
		t.Errorf("after alter --partitions 5: %d partitions", len(d[0].Partitions))
	}
	// zkafka's broker has no AlterConfigs/IncrementalAlterConfigs: the
	// tool says so instead of a generic client error.
	err := runErr(t, append([]string{"topics", "alter", "orders", "--config", "retention.ms=1"}, bs...)...)
	if !strings.Contains(err.Error(), "UNSUPPORTED_VERSION") || !strings.Contains(err.Error(), "IncrementalAlterConfigs") {
		t.Errorf("alter --config: %v", err)
	}
	if err := runErr(t, append([]string{"topics", "create", "orders", "--partitions", "1"}, bs...)...); !strings.Contains(err.Error(), "orders") {
		t.Errorf("creating an existing topic: %v", err)
	}
	if err := runErr(t, append([]string{"topics", "describe", "nope"}, bs...)...); !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "UNKNOWN_TOPIC") {
		t.Errorf("describing a missing topic: %v", err)
	}
	run(t, "", append([]string{"topics", "delete", "orders"}, bs...)...)
	checkFor(t, 10e9, "orders still listed after delete", func() bool {
		return !strings.Contains(run(t, "", append([]string{"topics", "list"}, bs...)...), "orders")
	})
	if err := runErr(t, "topics", "list", "--bootstrap-server", "127.0.0.1:1", "--timeout", "1s"); !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("an unreachable broker: %v", err)
	}
}
