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

// brokerAdmin is a kadm client that talks to one broker only.
func brokerAdmin(t *testing.T, e *kafkaenv.Env) *kadm.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// configOf describes one key of a resource through adm.
func configOf(t *testing.T, ctx context.Context, adm *kadm.Client, typ kmsg.ConfigResourceType, name, key string) kadm.Config {
	t.Helper()
	c, err := tryConfigOf(ctx, adm, typ, name, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func tryConfigOf(ctx context.Context, adm *kadm.Client, typ kmsg.ConfigResourceType, name, key string) (kadm.Config, error) {
	var rcs kadm.ResourceConfigs
	var err error
	if typ == kmsg.ConfigResourceTypeTopic {
		rcs, err = adm.DescribeTopicConfigs(ctx, name)
	} else {
		rcs, err = adm.DescribeBrokerConfigs(ctx, brokerID(name)...)
	}
	if err != nil || len(rcs) != 1 || rcs[0].Err != nil {
		return kadm.Config{}, fmt.Errorf("describe %s: %v %+v", name, err, rcs)
	}
	for _, c := range rcs[0].Configs {
		if c.Key == key {
			return c, nil
		}
	}
	return kadm.Config{}, fmt.Errorf("describe %s: no %s", name, key)
}

func brokerID(name string) []int32 {
	if name == "" {
		return nil
	}
	return []int32{int32(name[0] - '0')}
}

// waitConfig polls (up to 20 s) until key of the resource has value want.
func waitConfig(t *testing.T, ctx context.Context, adm *kadm.Client, typ kmsg.ConfigResourceType, name, key, want string) kadm.Config {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := tryConfigOf(ctx, adm, typ, name, key)
		if err == nil && c.Value != nil && *c.Value == want {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %q: %s is %v (%v), want %s", typ, name, key, c.Value, err, want)
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
	adm1, adm2 := brokerAdmin(t, cl.Broker(1)), brokerAdmin(t, cl.Broker(2))
	if r, err := adm1.CreateTopic(ctx, 1, 2, nil, "dyn"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	topic := kmsg.ConfigResourceTypeTopic
	brokerT := kmsg.ConfigResourceTypeBroker
	waitConfig(t, ctx, adm2, topic, "dyn", "retention.ms", "604800000")

	// validate_only changes nothing.
	if rs, err := adm1.ValidateAlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("3600000")}}); err != nil || rs[0].Err != nil {
		t.Fatalf("validate: %v %+v", err, rs)
	}
	if ok, _, _ := cl.Broker(1).ZK().Exists(cl.Broker(1).Path("/config/brokers/<default>")); ok {
		t.Fatal("validate_only wrote /config/brokers/<default>")
	}

	// The cluster default, through broker 1, reaches broker 2.
	rs, err := adm1.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
		{Name: "log.retention.ms", Value: kadm.StringPtr("3600000")},
		{Name: "message.max.bytes", Value: kadm.StringPtr("2000")},
	})
	if err != nil || rs[0].Err != nil {
		t.Fatalf("alter default: %v %+v", err, rs)
	}
	c := waitConfig(t, ctx, adm2, topic, "dyn", "retention.ms", "3600000")
	if c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || sources(c) != "log.retention.ms=3600000:DYNAMIC_DEFAULT_BROKER_CONFIG log.retention.ms=604800000:DEFAULT_CONFIG" {
		t.Fatalf("retention.ms on broker 2: %v %s", c.Source, sources(c))
	}
	waitConfig(t, ctx, adm2, topic, "dyn", "max.message.bytes", "2000")
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
	c = waitConfig(t, ctx, adm2, brokerT, "2", "log.retention.ms", "7200000")
	if c.Source != kmsg.ConfigSourceDynamicBrokerConfig || !strings.HasPrefix(sources(c), "log.retention.ms=7200000:DYNAMIC_BROKER_CONFIG log.retention.ms=3600000:DYNAMIC_DEFAULT_BROKER_CONFIG") {
		t.Fatalf("broker 2 log.retention.ms: %v %s", c.Source, sources(c))
	}
	waitConfig(t, ctx, adm2, topic, "dyn", "retention.ms", "7200000")
	if c := configOf(t, ctx, adm1, topic, "dyn", "retention.ms"); *c.Value != "3600000" {
		t.Fatalf("broker 1 took broker 2's value: %s", *c.Value)
	}
	// A topic override beats both.
	if rs, err := adm2.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("1000")}}, "dyn"); err != nil || rs[0].Err != nil {
		t.Fatalf("alter topic: %v %+v", err, rs)
	}
	c = waitConfig(t, ctx, adm2, topic, "dyn", "retention.ms", "1000")
	if c.Source != kmsg.ConfigSourceDynamicTopicConfig || !strings.HasPrefix(sources(c), "retention.ms=1000:DYNAMIC_TOPIC_CONFIG log.retention.ms=7200000:DYNAMIC_BROKER_CONFIG") {
		t.Fatalf("topic override: %v %s", c.Source, sources(c))
	}

	// Static keys are read-only and refused with Kafka's message.
	rs, err = adm1.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "num.partitions", Value: kadm.StringPtr("3")}, {Name: "log.dirs", Value: kadm.StringPtr("/x")}}, 1)
	if err != nil || rs[0].Err != kerr.InvalidRequest || rs[0].ErrMessage != "Invalid config value for resource ConfigResource(type=BROKER, name='1'): Cannot update these configs dynamically: Set(log.dirs, num.partitions)" {
		t.Fatalf("non-dynamic keys: %v %+v", err, rs)
	}
	if rs, err := adm1.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.ms", Value: kadm.StringPtr("soon")}}); err != nil || rs[0].Err != kerr.InvalidRequest {
		t.Fatalf("bad value: %v %+v", err, rs)
	}

	// A password is sensitive: no value.
	if c := configOf(t, ctx, adm1, brokerT, "1", "ssl.truststore.password"); !c.Sensitive || c.Value != nil || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
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
	c = waitConfig(t, ctx, adm2, brokerT, "2", "message.max.bytes", "1048588")
	if c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("message.max.bytes after delete: %v", c.Source)
	}
}
