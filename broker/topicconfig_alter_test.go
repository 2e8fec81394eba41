package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func incOp(o kmsg.IncrementalAlterConfigOp, name, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Op, c.Name, c.Value = o, name, &value
	return c
}

// TestApplyIncremental: Kafka's prepareIncrementalConfigs — APPEND starts
// from the default and keeps values distinct, SUBTRACT removes, SET and
// DELETE edit one key, APPEND on a non-list key is refused.
func TestApplyIncremental(t *testing.T) {
	cur := map[string]string{"retention.ms": "5"}
	err := applyIncremental(cur, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		incOp(kmsg.IncrementalAlterConfigOpAppend, "cleanup.policy", "compact,delete"),
		incOp(kmsg.IncrementalAlterConfigOpDelete, "retention.ms", ""),
		incOp(kmsg.IncrementalAlterConfigOpSet, "segment.bytes", "1000"),
	})
	if err != nil || cur["cleanup.policy"] != "delete,compact" || cur["segment.bytes"] != "1000" || len(cur) != 2 {
		t.Fatalf("%v %v", cur, err)
	}
	if err := applyIncremental(cur, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		incOp(kmsg.IncrementalAlterConfigOpSubtract, "cleanup.policy", "delete")}); err != nil || cur["cleanup.policy"] != "compact" {
		t.Fatalf("subtract: %v %v", cur, err)
	}
	if err := applyIncremental(cur, []kmsg.IncrementalAlterConfigsRequestResourceConfig{
		incOp(kmsg.IncrementalAlterConfigOpAppend, "segment.bytes", "1")}); err == nil {
		t.Fatal("append to segment.bytes accepted")
	}
}

// TestChangedTopic reads both notification versions Kafka writes.
func TestChangedTopic(t *testing.T) {
	for data, want := range map[string]string{
		`{"version":2,"entity_path":"topics/a.b"}`:                     "a.b",
		`{"version":1,"entity_type":"topics","entity_name":"old"}`:     "old",
		`{"version":2,"entity_path":"brokers/1"}`:                      "",
		`{"version":1,"entity_type":"clients","entity_name":"client"}`: "",
	} {
		got, ok := changedTopic([]byte(data))
		if got != want && ok || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", data, got, ok, want)
		}
	}
}
