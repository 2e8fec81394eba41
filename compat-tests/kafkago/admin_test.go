package kafkago

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/zkafka/zkafka/broker"
)

func TestCreateDescribeDeleteTopics(t *testing.T) {
	e := startBroker(t)
	adm := e.Admin()
	ctx := ctxT(t)
	res, err := adm.CreateTopic(ctx, 3, 1, map[string]*string{"retention.ms": kadm.StringPtr("3600000")}, "orders")
	if err != nil || res.Err != nil {
		t.Fatalf("create: %v %v", err, res.Err)
	}
	if res.ID == [16]byte{} || res.NumPartitions != 3 || res.ReplicationFactor != 1 {
		t.Fatalf("create result %+v", res)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "orders"); !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("second create: %v, want TOPIC_ALREADY_EXISTS", err)
	}
	td, err := adm.ListTopics(ctx, "orders")
	if err != nil || td["orders"].Err != nil || len(td["orders"].Partitions) != 3 || td["orders"].ID != res.ID {
		t.Fatalf("describe: %v %+v", err, td["orders"])
	}
	for _, p := range td["orders"].Partitions {
		if p.Leader != 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
			t.Fatalf("partition %+v", p)
		}
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	cfgs, _ := rc.On("orders", nil)
	var sawRetention, sawSegment bool
	for _, c := range cfgs.Configs {
		switch c.Key {
		case "retention.ms":
			sawRetention = c.MaybeValue() == "3600000" && c.Source == 1
		case "segment.bytes":
			sawSegment = c.MaybeValue() == "1073741824" && c.Source == 5
		}
	}
	if !sawRetention || !sawSegment {
		t.Fatalf("configs: %+v", cfgs.Configs)
	}
	if _, err := adm.DescribeBrokerConfigs(ctx, 0); err != nil {
		t.Fatalf("broker configs: %v", err)
	}
	if _, err := adm.CreatePartitions(ctx, 2, "orders"); err != nil {
		t.Fatalf("create partitions: %v", err)
	}
	if td, _ := adm.ListTopics(ctx, "orders"); len(td["orders"].Partitions) != 5 {
		t.Fatalf("after CreatePartitions: %d partitions", len(td["orders"].Partitions))
	}
	dr, err := adm.DeleteTopics(ctx, "orders")
	if err != nil || dr["orders"].Err != nil {
		t.Fatalf("delete: %v %v", err, dr["orders"].Err)
	}
	if td, _ := adm.ListTopics(ctx); len(td) != 0 {
		t.Fatalf("topics after delete: %v", td.Names())
	}
	if _, err := os.Stat(filepath.Join(e.Config.LogDirs[0], "orders-0")); !os.IsNotExist(err) {
		t.Errorf("partition directory still there after delete: %v", err)
	}
	z := e.ZK()
	for _, p := range []string{"/brokers/topics/orders", "/config/topics/orders", "/admin/delete_topics/orders"} {
		if ok, _, _ := z.Exists(e.Path(p)); ok {
			t.Errorf("%s still exists after delete", p)
		}
	}
	if dr, _ := adm.DeleteTopics(ctx, "orders"); !errors.Is(dr["orders"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete unknown: %v", dr["orders"].Err)
	}
}

func TestCreateTopicValidation(t *testing.T) {
	e := startBroker(t)
	adm := e.Admin()
	ctx := ctxT(t)
	cases := []struct {
		name    string
		parts   int32
		rf      int16
		configs map[string]*string
		want    error
	}{
		{"bad/name", 1, 1, nil, kerr.InvalidTopicException},
		{"..", 1, 1, nil, kerr.InvalidTopicException},
		{".", 1, 1, nil, kerr.InvalidTopicException},
		{strings.Repeat("x", 250), 1, 1, nil, kerr.InvalidTopicException},
		{"bad name", 1, 1, nil, kerr.InvalidTopicException},
		{"rf3", 1, 3, nil, kerr.InvalidReplicationFactor},
		{"zero-parts", 0, 1, nil, kerr.InvalidPartitions},
		{"shredded", 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("shred")}, kerr.InvalidConfig},
		{"bad-config", 1, 1, map[string]*string{"retention.ms": kadm.StringPtr("soon")}, kerr.InvalidConfig},
		{"unknown-config", 1, 1, map[string]*string{"no.such.key": kadm.StringPtr("1")}, kerr.InvalidConfig},
	}
	for _, c := range cases {
		_, err := adm.CreateTopic(ctx, c.parts, c.rf, c.configs, c.name)
		if !errors.Is(err, c.want) {
			t.Errorf("create %.20q: %v, want %v", c.name, err, c.want)
		}
	}
	ok249 := strings.Repeat("y", 249)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, ok249); err != nil {
		t.Errorf("249-character name: %v", err)
	}
	if _, err := adm.ValidateCreateTopics(ctx, 2, 1, nil, "validate-only"); err != nil {
		t.Fatalf("validate only: %v", err)
	}
	if td, _ := adm.ListTopics(ctx, "validate-only"); td["validate-only"].Err == nil {
		t.Fatalf("validate_only created the topic")
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "a.b"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "a_b"); !errors.Is(err, kerr.InvalidTopicException) {
		t.Errorf("colliding name: %v", err)
	}
}

// TestZNodesLookLikeKafka reads the metadata znodes with go-zookeeper and
// checks Apache Kafka's JSON shapes.
func TestZNodesLookLikeKafka(t *testing.T) {
	e := startBroker(t)
	adm := e.Admin()
	ctx := ctxT(t)
	res, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.bytes": kadm.StringPtr("1000000")}, "layout")
	if err != nil {
		t.Fatal(err)
	}
	z := e.ZK()
	get := func(p string) map[string]any {
		t.Helper()
		data, _, err := z.Get(e.Path(p))
		if err != nil {
			t.Fatalf("get %s: %v", p, err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s is not JSON: %q", p, data)
		}
		return m
	}
	keys := func(p string, m map[string]any, want ...string) {
		t.Helper()
		for _, k := range want {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: missing %q in %v", p, k, m)
			}
		}
		if len(m) != len(want) {
			t.Errorf("%s: keys %v, want exactly %v", p, m, want)
		}
	}
	cid := get("/cluster/id")
	keys("/cluster/id", cid, "version", "id")
	if cid["version"] != "1" || len(cid["id"].(string)) != 22 {
		t.Errorf("/cluster/id = %v", cid)
	}
	br := get("/brokers/ids/0")
	keys("/brokers/ids/0", br, "version", "host", "port", "endpoints", "listener_security_protocol_map", "jmx_port", "timestamp", "features")
	if br["version"] != 5.0 || br["endpoints"].([]any)[0] != "PLAINTEXT://"+e.Addr || br["jmx_port"] != -1.0 {
		t.Errorf("/brokers/ids/0 = %v", br)
	}
	if _, st, _ := z.Get(e.Path("/brokers/ids/0")); st.EphemeralOwner == 0 {
		t.Errorf("/brokers/ids/0 is not ephemeral")
	}
	tp := get("/brokers/topics/layout")
	keys("/brokers/topics/layout", tp, "version", "partitions", "adding_replicas", "removing_replicas", "topic_id")
	if tp["version"] != 3.0 || tp["topic_id"] != base64URL(res.ID) || len(tp["partitions"].(map[string]any)) != 2 {
		t.Errorf("/brokers/topics/layout = %v", tp)
	}
	st := get("/brokers/topics/layout/partitions/1/state")
	keys("state", st, "controller_epoch", "leader", "version", "leader_epoch", "isr")
	if st["leader"] != 0.0 || st["version"] != 1.0 || st["controller_epoch"].(float64) < 1 {
		t.Errorf("state = %v", st)
	}
	cfg := get("/config/topics/layout")
	keys("/config/topics/layout", cfg, "version", "config")
	if cfg["config"].(map[string]any)["retention.bytes"] != "1000000" {
		t.Errorf("config = %v", cfg)
	}
	ctl := get("/controller")
	keys("/controller", ctl, "version", "brokerid", "timestamp")
	if ctl["brokerid"] != 0.0 || ctl["version"] != 2.0 {
		t.Errorf("/controller = %v", ctl)
	}
	epoch, _, err := z.Get(e.Path("/controller_epoch"))
	if err != nil || string(epoch) != "1" {
		t.Errorf("/controller_epoch = %q %v", epoch, err)
	}
	for _, p := range []string{"/admin/delete_topics", "/config/changes", "/brokers/seqid", "/isr_change_notification"} {
		if ok, _, _ := z.Exists(e.Path(p)); !ok {
			t.Errorf("%s missing", p)
		}
	}
}

// allLed reports whether every partition of a topic has a leader.
func allLed(td kadm.TopicDetail) bool {
	for _, p := range td.Partitions {
		if p.Err != nil || p.Leader < 0 {
			return false
		}
	}
	return true
}

// TestTopicCreatedInZooKeeperIsServed writes a topic the way another
// broker or Kafka's tools would, and expects the broker to pick it up.
func TestTopicCreatedInZooKeeperIsServed(t *testing.T) {
	e := startBroker(t)
	z := e.ZK()
	data := `{"version":3,"partitions":{"0":[0],"1":[0]},"adding_replicas":{},"removing_replicas":{},"topic_id":"AAAAAAAAAAAAAAAAAAAAAQ"}`
	if _, err := z.Create(e.Path("/brokers/topics/external"), []byte(data), 0, openACL); err != nil {
		t.Fatal(err)
	}
	adm := e.Admin()
	deadline := time.Now().Add(10 * time.Second)
	for {
		td, err := adm.ListTopics(ctxT(t), "external")
		if err == nil && td["external"].Err == nil && len(td["external"].Partitions) == 2 && allLed(td["external"]) {
			if ok, _, _ := z.Exists(e.Path("/brokers/topics/external/partitions/1/state")); !ok {
				t.Fatalf("controller did not write the partition state")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic created in ZooKeeper never served: %v %+v", err, td)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c := e.Client()
	produceSync(t, c, recordTo("external", 1, "v"))
}

var _ = broker.ErrServerClosed
