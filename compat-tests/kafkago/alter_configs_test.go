package kafkago

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// AlterConfigs (33) and IncrementalAlterConfigs (44) through kadm and raw
// kmsg requests: the overrides DescribeConfigs shows afterwards, Kafka's
// per-resource errors, validate_only, and a second broker that learns of
// the change through /config/changes.

// topicConfigs is DescribeConfigs of one topic, asked of one broker:
// name → value, and the names whose source is DYNAMIC_TOPIC_CONFIG.
func topicConfigs(t *testing.T, ctx context.Context, cl *kgo.Client, broker int32, topic string) (map[string]string, map[string]bool) {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl.Broker(int(broker)))
	if err != nil || len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("describe configs of %s on broker %d: %v %+v", topic, broker, err, resp)
	}
	vals, dynamic := map[string]string{}, map[string]bool{}
	for _, c := range resp.Resources[0].Configs {
		if c.Value != nil {
			vals[c.Name] = *c.Value
		}
		dynamic[c.Name] = c.Source == kmsg.ConfigSourceDynamicTopicConfig
	}
	return vals, dynamic
}

// incAlter sends one IncrementalAlterConfigs for one resource to broker
// and returns its error code and message.
func incAlter(t *testing.T, ctx context.Context, cl *kgo.Client, broker int32, typ kmsg.ConfigResourceType, name string, validateOnly bool, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) (int16, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.Configs = typ, name, ops
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(ctx, cl.Broker(int(broker)))
	if err != nil || len(resp.Resources) != 1 {
		t.Fatalf("incremental alter: %v %+v", err, resp)
	}
	msg := ""
	if m := resp.Resources[0].ErrorMessage; m != nil {
		msg = *m
	}
	return resp.Resources[0].ErrorCode, msg
}

func op(o kmsg.IncrementalAlterConfigOp, name string, value *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Op, c.Name, c.Value = o, name, value
	return c
}

func TestIncrementalAlterConfigs(t *testing.T) {
	e := startBroker(t)
	ctx := ctxT(t)
	cl := e.Client()
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.bytes": kadm.StringPtr("100000")}, "inc"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("1234")},
		{Op: kadm.DeleteConfig, Name: "retention.bytes"},
		{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact")},
	}, "inc")
	if err != nil || len(rs) != 1 || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	vals, dyn := topicConfigs(t, ctx, cl, 0, "inc")
	if vals["retention.ms"] != "1234" || !dyn["retention.ms"] || dyn["retention.bytes"] || vals["cleanup.policy"] != "delete,compact" || !dyn["cleanup.policy"] {
		t.Fatalf("after set/delete/append: %v dynamic %v", vals, dyn)
	}
	if code, msg := incAlter(t, ctx, cl, 0, kmsg.ConfigResourceTypeTopic, "inc", false,
		op(kmsg.IncrementalAlterConfigOpSubtract, "cleanup.policy", kadm.StringPtr("delete"))); code != 0 {
		t.Fatalf("subtract: %d %s", code, msg)
	}
	if vals, _ := topicConfigs(t, ctx, cl, 0, "inc"); vals["cleanup.policy"] != "compact" {
		t.Fatalf("after subtract: cleanup.policy=%q", vals["cleanup.policy"])
	}

	// Errors, one per resource, and nothing written.
	code, msg := incAlter(t, ctx, cl, 0, kmsg.ConfigResourceTypeTopic, "inc", false, op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", kadm.StringPtr("soon")))
	if code != kerr.InvalidConfig.Code || !strings.Contains(msg, "Invalid config value for resource ConfigResource(type=TOPIC, name='inc')") || !strings.Contains(msg, "retention.ms") {
		t.Errorf("bad value: %d %q, want INVALID_CONFIG", code, msg)
	}
	if code, msg := incAlter(t, ctx, cl, 0, kmsg.ConfigResourceTypeTopic, "inc", false, op(kmsg.IncrementalAlterConfigOpSet, "no.such.config", kadm.StringPtr("1"))); code != kerr.InvalidConfig.Code || msg != "Unknown topic config name: no.such.config" {
		t.Errorf("unknown key: %d %q", code, msg)
	}
	if code, msg := incAlter(t, ctx, cl, 0, kmsg.ConfigResourceTypeTopic, "inc", false, op(kmsg.IncrementalAlterConfigOpAppend, "retention.ms", kadm.StringPtr("1"))); code != kerr.InvalidRequest.Code {
		t.Errorf("append to a non-list key: %d %q, want INVALID_REQUEST", code, msg)
	}
	if code, msg := incAlter(t, ctx, cl, 0, kmsg.ConfigResourceTypeTopic, "missing", false, op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", kadm.StringPtr("1"))); code != kerr.UnknownTopicOrPartition.Code || msg != "The topic 'missing' does not exist." {
		t.Errorf("unknown topic: %d %q", code, msg)
	}
	if code, msg := incAlter(t, ctx, cl, 0, kmsg.ConfigResourceTypeBroker, "0", false, op(kmsg.IncrementalAlterConfigOpSet, "log.dirs", kadm.StringPtr("/x"))); code != kerr.InvalidRequest.Code || !strings.Contains(msg, "Cannot update these configs dynamically") {
		t.Errorf("broker config: %d %q", code, msg)
	}
	if code, _ := incAlter(t, ctx, cl, 0, kmsg.ConfigResourceTypeTopic, "inc", true, op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", kadm.StringPtr("99"))); code != 0 {
		t.Errorf("validate_only: %d", code)
	}
	if code, _ := incAlter(t, ctx, cl, 0, kmsg.ConfigResourceTypeTopic, "inc", true, op(kmsg.IncrementalAlterConfigOpSet, "retention.ms", kadm.StringPtr("x"))); code != kerr.InvalidConfig.Code {
		t.Errorf("validate_only of a bad value: %d", code)
	}
	if vals, _ := topicConfigs(t, ctx, cl, 0, "inc"); vals["retention.ms"] != "1234" {
		t.Errorf("a failed or validate-only alter changed retention.ms to %q", vals["retention.ms"])
	}
}

// TestAlterConfigsReplacesOverrides: AlterConfigs (33) replaces the whole
// set of overrides; validate_only and errors write nothing.
func TestAlterConfigsReplacesOverrides(t *testing.T) {
	e := startBroker(t)
	ctx := ctxT(t)
	cl := e.Client()
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"retention.ms": kadm.StringPtr("3600000")}, "full"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	if rs, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "segment.bytes", Value: kadm.StringPtr("1048576")}}, "full"); err != nil || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	vals, dyn := topicConfigs(t, ctx, cl, 0, "full")
	if vals["segment.bytes"] != "1048576" || !dyn["segment.bytes"] || dyn["retention.ms"] {
		t.Fatalf("after AlterConfigs: %v dynamic %v (retention.ms must be back to its default)", vals, dyn)
	}
	rs, err := adm.ValidateAlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "max.message.bytes", Value: kadm.StringPtr("-5")}}, "full")
	if err != nil || !errorIs(rs[0].Err, kerr.InvalidConfig) {
		t.Fatalf("validate a bad value: %v %+v", err, rs)
	}
	if rs, err := adm.ValidateAlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "max.message.bytes", Value: kadm.StringPtr("5000")}}, "full"); err != nil || rs[0].Err != nil {
		t.Fatalf("validate: %v %+v", err, rs)
	}
	if rs, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "segment.bytes", Value: kadm.StringPtr("1")}}, "missing"); err != nil || !errorIs(rs[0].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("unknown topic: %v %+v", err, rs)
	}
	if vals, dyn := topicConfigs(t, ctx, cl, 0, "full"); vals["segment.bytes"] != "1048576" || dyn["max.message.bytes"] {
		t.Fatalf("validate_only wrote: %v", vals)
	}
}

func errorIs(err error, want *kerr.Error) bool {
	return err != nil && strings.Contains(err.Error(), want.Message)
}

// TestAlteredConfigReachesOtherBroker: an alter answered by broker 1 is
// seen by broker 2 through /config/changes: its DescribeConfigs shows the
// new value and the partition it leads applies it (max.message.bytes).
func TestAlteredConfigReachesOtherBroker(t *testing.T) {
	c := kafkaenv.StartCluster(t, 2)
	ctx := ctxT(t)
	cl := c.Broker(1).Client(kgo.SeedBrokers(c.Seeds()...))
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(ctx, 2, 1, nil, "spread"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	var onTwo int32 = -1
	for deadline := time.Now().Add(20 * time.Second); onTwo < 0; time.Sleep(20 * time.Millisecond) {
		if td, err := adm.ListTopics(ctx, "spread"); err == nil {
			for _, p := range td["spread"].Partitions {
				if p.Leader == 2 {
					onTwo = p.Partition
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no partition led by broker 2")
		}
	}
	if code, msg := incAlter(t, ctx, cl, 1, kmsg.ConfigResourceTypeTopic, "spread", false, op(kmsg.IncrementalAlterConfigOpSet, "max.message.bytes", kadm.StringPtr("2000"))); code != 0 {
		t.Fatalf("alter on broker 1: %d %s", code, msg)
	}
	// Kafka's layout: the overrides and a version 2 change notification.
	zc := c.Broker(1).ZK()
	if data, _, err := zc.Get(c.Broker(1).Path("/config/topics/spread")); err != nil || string(data) != `{"version":1,"config":{"max.message.bytes":"2000"}}` {
		t.Errorf("/config/topics/spread: %s %v", data, err)
	}
	notes, _, err := zc.Children(c.Broker(1).Path("/config/changes"))
	if err != nil || len(notes) != 1 || !strings.HasPrefix(notes[0], "config_change_") {
		t.Fatalf("/config/changes: %v %v", notes, err)
	}
	if data, _, err := zc.Get(c.Broker(1).Path("/config/changes/" + notes[0])); err != nil || string(data) != `{"version":2,"entity_path":"topics/spread"}` {
		t.Errorf("%s: %s %v", notes[0], data, err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if vals, dyn := topicConfigs(t, ctx, cl, 2, "spread"); vals["max.message.bytes"] == "2000" && dyn["max.message.bytes"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("broker 2 never showed max.message.bytes=2000")
		}
	}
	big := &kgo.Record{Topic: "spread", Partition: onTwo, Value: make([]byte, 5000)}
	p := c.Broker(1).Client(kgo.SeedBrokers(c.Seeds()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err := p.ProduceSync(ctx, big).FirstErr(); !errorIs(err, kerr.MessageTooLarge) {
		t.Fatalf("produce 5000 bytes to broker 2's partition after max.message.bytes=2000: %v, want MESSAGE_TOO_LARGE", err)
	}
}
