package kafkago

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// Dynamic broker configs through kadm on two brokers: the cluster
// default set through broker 1 reaches broker 2 without a restart (its
// DescribeConfigs of a topic without an override, and its produce limit),
// a per-broker value beats the default, a key that is not dynamic is
// refused with Kafka's message, validate_only changes nothing, and the
// znodes are Kafka's JSON.

// node is a client of one broker, for requests that must reach it (kadm
// sends a topic's DescribeConfigs to any broker).
type node struct {
	id  int32
	cl  *kgo.Client
	adm *kadm.Client
}

func nodeOf(t *testing.T, e *kafkaenv.Env, id int32) node {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return node{id, cl, kadm.NewClient(cl)}
}

// configOf describes one key of a resource on n, with synonyms.
func configOf(t *testing.T, ctx context.Context, n node, typ kmsg.ConfigResourceType, name, key string) kadm.Config {
	t.Helper()
	c, err := tryConfigOf(ctx, n, typ, name, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func tryConfigOf(ctx context.Context, n node, typ kmsg.ConfigResourceType, name, key string) (kadm.Config, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, n.cl.Broker(int(n.id)))
	if err != nil || len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
		return kadm.Config{}, fmt.Errorf("describe %s on %d: %v %+v", name, n.id, err, resp)
	}
	for _, rc := range resp.Resources[0].Configs {
		if rc.Name == key {
			c := kadm.Config{Key: rc.Name, Value: rc.Value, Sensitive: rc.IsSensitive, Source: rc.Source}
			for _, sy := range rc.ConfigSynonyms {
				c.Synonyms = append(c.Synonyms, kadm.ConfigSynonym{Key: sy.Name, Value: sy.Value, Source: sy.Source})
			}
			return c, nil
		}
	}
	return kadm.Config{}, fmt.Errorf("describe %s on %d: no %s", name, n.id, key)
}

// waitConfig polls (up to 20 s) until key of the resource has value want on n.
func waitConfig(t *testing.T, ctx context.Context, n node, typ kmsg.ConfigResourceType, name, key, want string) kadm.Config {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := tryConfigOf(ctx, n, typ, name, key)
		if err == nil && c.Value != nil && *c.Value == want {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %q on %d: %s is %v (%v), want %s", typ, name, n.id, key, c.Value, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sources(c kadm.Config) string {
	var s []string
	for _, sy := range c.Synonyms {
		v := "<nil>"
		if sy.Value != nil {
			v = *sy.Value
		}
		s = append(s, sy.Key+"="+v+":"+sy.Source.String())
	}
	return strings.Join(s, " ")
}

func TestDynamicBrokerConfigs(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 2, kafkaenv.Configure(func(c *broker.Config) { c.SSL.TruststorePassword = "changeit" }))
	ctx := ctxT(t)
	n1, n2 := nodeOf(t, cl.Broker(1), 1), nodeOf(t, cl.Broker(2), 2)
	adm1, adm2 := n1.adm, n2.adm
	if r, err := adm1.CreateTopic(ctx, 1, 2, nil, "dyn"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	topic := kmsg.ConfigResourceTypeTopic
	brokerT := kmsg.ConfigResourceTypeBroker
	waitConfig(t, ctx, n2, topic, "dyn", "retention.ms", "604800000")

	// validate_only changes nothing.
	if rs, err := adm1.ValidateAlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("3600000")}}); err != nil || rs[0].Err != nil {
		t.Fatalf("validate: %v %+v", err, rs)
	}
	if ok, _, _ := cl.Broker(1).ZK().Exists(cl.Broker(1).Path("/config/brokers/<default>")); ok {
		t.Fatal("validate_only wrote /config/brokers/<default>")
	}

	// The cluster default, sent to broker 1, reaches broker 2.
	if code, msg := incAlter(t, ctx, n1.cl, 1, brokerT, "", false,
		op(kmsg.IncrementalAlterConfigOpSet, "log.retention.ms", kadm.StringPtr("3600000")),
		op(kmsg.IncrementalAlterConfigOpSet, "message.max.bytes", kadm.StringPtr("2000"))); code != 0 {
		t.Fatalf("alter default on broker 1: %d %s", code, msg)
	}
	waitConfig(t, ctx, n1, topic, "dyn", "retention.ms", "3600000")
	c := waitConfig(t, ctx, n2, topic, "dyn", "retention.ms", "3600000")
	if c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || sources(c) != "log.retention.ms=3600000:DYNAMIC_DEFAULT_BROKER_CONFIG log.retention.ms=604800000:DEFAULT_CONFIG" {
		t.Fatalf("retention.ms on broker 2: %v %s", c.Source, sources(c))
	}
	waitConfig(t, ctx, n2, topic, "dyn", "max.message.bytes", "2000")
	// The default resource lists only what was set at the default.
	if rcs, err := adm2.DescribeBrokerConfigs(ctx); err != nil || len(rcs) != 1 || len(rcs[0].Configs) != 2 ||
		rcs[0].Configs[0].Key != "log.retention.ms" || rcs[0].Configs[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("describe the default: %v %+v", err, rcs)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(cl.Seeds()...), kgo.ProducerBatchMaxBytes(1<<20), kgo.RecordRetries(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	big := &kgo.Record{Topic: "dyn", Value: make([]byte, 5000)}
	if err := prod.ProduceSync(ctx, big).FirstErr(); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("5000-byte record under a 2000-byte dynamic default: %v", err)
	}

	// A per-broker value beats the default (AlterConfigs, whole state).
	if rs, err := adm2.AlterBrokerConfigsState(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("7200000")}}, 2); err != nil || rs[0].Err != nil {
		t.Fatalf("alter broker 2: %v %+v", err, rs)
	}
	c = waitConfig(t, ctx, n2, brokerT, "2", "log.retention.ms", "7200000")
	if c.Source != kmsg.ConfigSourceDynamicBrokerConfig || !strings.HasPrefix(sources(c), "log.retention.ms=7200000:DYNAMIC_BROKER_CONFIG log.retention.ms=3600000:DYNAMIC_DEFAULT_BROKER_CONFIG") {
		t.Fatalf("broker 2 log.retention.ms: %v %s", c.Source, sources(c))
	}
	waitConfig(t, ctx, n2, topic, "dyn", "retention.ms", "7200000")
	if c := configOf(t, ctx, n1, topic, "dyn", "retention.ms"); *c.Value != "3600000" {
		t.Fatalf("broker 1 took broker 2's value: %s", *c.Value)
	}
	// A topic override beats both.
	if rs, err := adm2.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("1000")}}, "dyn"); err != nil || rs[0].Err != nil {
		t.Fatalf("alter topic: %v %+v", err, rs)
	}
	c = waitConfig(t, ctx, n2, topic, "dyn", "retention.ms", "1000")
	if c.Source != kmsg.ConfigSourceDynamicTopicConfig || !strings.HasPrefix(sources(c), "retention.ms=1000:DYNAMIC_TOPIC_CONFIG log.retention.ms=7200000:DYNAMIC_BROKER_CONFIG") {
		t.Fatalf("topic override: %v %s", c.Source, sources(c))
	}

	// Static keys are read-only and refused with Kafka's message.
	rs, err := adm1.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "num.partitions", Value: kadm.StringPtr("3")}, {Name: "log.dirs", Value: kadm.StringPtr("/x")}}, 1)
	if err != nil || rs[0].Err != kerr.InvalidRequest || rs[0].ErrMessage != "Invalid config value for resource ConfigResource(type=BROKER, name='1'): Cannot update these configs dynamically: Set(log.dirs, num.partitions)" {
		t.Fatalf("non-dynamic keys: %v %+v", err, rs)
	}
	if rs, err := adm1.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("soon")}}); err != nil || rs[0].Err != kerr.InvalidRequest {
		t.Fatalf("bad value: %v %+v", err, rs)
	}

	// A password is sensitive: no value.
	if c := configOf(t, ctx, n1, brokerT, "1", "ssl.truststore.password"); !c.Sensitive || c.Value != nil || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("ssl.truststore.password: %+v", c)
	}

	// The znodes, as Kafka's AdminZkClient writes them.
	zc := cl.Broker(1).ZK()
	data, _, err := zc.Get(cl.Broker(1).Path("/config/brokers/<default>"))
	if err != nil || string(data) != `{"version":1,"config":{"log.retention.ms":"3600000","message.max.bytes":"2000"}}` {
		t.Fatalf("/config/brokers/<default>: %s %v", data, err)
	}
	data, _, err = zc.Get(cl.Broker(1).Path("/config/brokers/2"))
	if err != nil || string(data) != `{"version":1,"config":{"log.retention.ms":"7200000"}}` {
		t.Fatalf("/config/brokers/2: %s %v", data, err)
	}
	notes, _, err := zc.Children(cl.Broker(1).Path("/config/changes"))
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, n := range notes {
		d, _, _ := zc.Get(cl.Broker(1).Path("/config/changes/" + n))
		paths[string(d)] = true
	}
	if !paths[`{"version":2,"entity_path":"brokers/<default>"}`] || !paths[`{"version":2,"entity_path":"brokers/2"}`] {
		t.Fatalf("notifications: %v", paths)
	}

	// Deleting the default brings Kafka's back.
	if rs, err := adm1.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "message.max.bytes"}}); err != nil || rs[0].Err != nil {
		t.Fatalf("delete default: %v %+v", err, rs)
	}
	c = waitConfig(t, ctx, n2, brokerT, "2", "message.max.bytes", "1048588")
	if c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("message.max.bytes after delete: %v", c.Source)
	}

	// A restarted broker reads its dynamic configs at start, not from the
	// notifications (deleted here, as the 15-minute purge does).
	cl.Broker(2).Stop()
	notes, _, err = zc.Children(cl.Broker(1).Path("/config/changes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if err := zc.Delete(cl.Broker(1).Path("/config/changes/"+n), -1); err != nil {
			t.Fatal(err)
		}
	}
	cl.Broker(2).Start()
	n2 = nodeOf(t, cl.Broker(2), 2)
	c = waitConfig(t, ctx, n2, brokerT, "2", "log.retention.ms", "7200000")
	if c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("after restart: %v %s", c.Source, sources(c))
	}
}

// TestDynamicRetentionDefault: a cluster default log.segment.bytes and
// log.retention.ms, set on broker 1, make the leader of a topic without
// overrides roll small segments and delete the old ones.
func TestDynamicRetentionDefault(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 2, kafkaenv.Configure(func(c *broker.Config) { c.LogRetentionCheck = 50 * time.Millisecond }))
	ctx := ctxT(t)
	n1 := nodeOf(t, cl.Broker(1), 1)
	if r, err := n1.adm.CreateTopic(ctx, 1, 2, nil, "ret"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	if code, msg := incAlter(t, ctx, n1.cl, 1, kmsg.ConfigResourceTypeBroker, "", false,
		op(kmsg.IncrementalAlterConfigOpSet, "log.segment.bytes", kadm.StringPtr("1024"))); code != 0 {
		t.Fatalf("alter default: %d %s", code, msg)
	}
	n2 := nodeOf(t, cl.Broker(2), 2)
	waitConfig(t, ctx, n1, kmsg.ConfigResourceTypeTopic, "ret", "segment.bytes", "1024")
	waitConfig(t, ctx, n2, kmsg.ConfigResourceTypeTopic, "ret", "segment.bytes", "1024")
	prod, err := kgo.NewClient(kgo.SeedBrokers(cl.Seeds()...), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := 0; i < 20; i++ {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "ret", Value: make([]byte, 400)}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	start := func() int64 {
		lo, err := n1.adm.ListStartOffsets(ctx, "ret")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := lo.Lookup("ret", 0)
		return o.Offset
	}
	// Kafka's default retention (7 days) keeps everything.
	time.Sleep(200 * time.Millisecond)
	if s := start(); s != 0 {
		t.Fatalf("start offset %d before the retention change", s)
	}
	if code, msg := incAlter(t, ctx, n1.cl, 1, kmsg.ConfigResourceTypeBroker, "", false,
		op(kmsg.IncrementalAlterConfigOpSet, "log.retention.ms", kadm.StringPtr("1"))); code != 0 {
		t.Fatalf("alter retention: %d %s", code, msg)
	}
	deadline := time.Now().Add(20 * time.Second)
	for start() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("retention never deleted a segment under log.retention.ms=1")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A default min.insync.replicas above the ISR refuses acks=all.
	if code, msg := incAlter(t, ctx, n1.cl, 1, kmsg.ConfigResourceTypeBroker, "", false,
		op(kmsg.IncrementalAlterConfigOpSet, "min.insync.replicas", kadm.StringPtr("3"))); code != 0 {
		t.Fatalf("alter min.insync.replicas: %d %s", code, msg)
	}
	waitConfig(t, ctx, n2, kmsg.ConfigResourceTypeTopic, "ret", "min.insync.replicas", "3")
	waitConfig(t, ctx, n1, kmsg.ConfigResourceTypeTopic, "ret", "min.insync.replicas", "3")
	strict, err := kgo.NewClient(kgo.SeedBrokers(cl.Seeds()...), kgo.RecordRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	if err := strict.ProduceSync(ctx, &kgo.Record{Topic: "ret", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all under min.insync.replicas=3 with 2 replicas: %v", err)
	}
}
