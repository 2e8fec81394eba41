package kafkatool

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
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
		"--config", "retention.ms=3600000", "--config", "segment.bytes=1048576"}, bs...)...)
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
	testAlterConfigs(t, e, bs)
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

// testAlterConfigs: topics alter --config/--delete-config changes the
// overrides (IncrementalAlterConfigs), as topics describe and the
// broker's DescribeConfigs show them; a bad value fails with Kafka's code.
func testAlterConfigs(t *testing.T, e *kafkaenv.Env, bs []string) {
	t.Helper()
	run(t, "", append([]string{"topics", "alter", "orders", "--config", "retention.ms=1234", "--delete-config", "segment.bytes"}, bs...)...)
	d := decode[[]topicJSON](t, run(t, "", append([]string{"topics", "describe", "orders", "-o", "json"}, bs...)...))
	if len(d) != 1 || d[0].Configs["retention.ms"] != "1234" || d[0].Configs["segment.bytes"] != "" {
		t.Errorf("describe after alter: %+v", d)
	}
	ctx := kafkaenv.Context(t, 30*time.Second)
	rcs, err := e.Admin().DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc.Configs {
		switch c.Key {
		case "retention.ms":
			if c.MaybeValue() != "1234" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
				t.Errorf("DescribeConfigs retention.ms: %q source %v", c.MaybeValue(), c.Source)
			}
		case "segment.bytes":
			if c.MaybeValue() != "1073741824" || c.Source != kmsg.ConfigSourceDefaultConfig {
				t.Errorf("DescribeConfigs segment.bytes after --delete-config: %q source %v", c.MaybeValue(), c.Source)
			}
		}
	}
	err = runErr(t, append([]string{"topics", "alter", "orders", "--config", "retention.ms=soon"}, bs...)...)
	if !strings.Contains(err.Error(), "INVALID_CONFIG") || !strings.Contains(err.Error(), "retention.ms") {
		t.Errorf("alter --config retention.ms=soon: %v", err)
	}
}
