package zkafkatest

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
)

// TestRuleOrder: rules are tried in the order added, the first match acts
// alone and uses up its count; a used-up rule goes; the harness's own
// requests pass.
func TestRuleOrder(t *testing.T) {
	c := &Cluster{}
	c.hooks.init()
	produce := broker.RequestInfo{Broker: 1, Key: kmsg.Produce.Int16(), Version: 9}
	fetch := broker.RequestInfo{Broker: 1, Key: kmsg.Fetch.Int16(), Version: 12}
	once := c.InterceptKafka(KafkaRule{Keys: []int16{kmsg.Produce.Int16()}, Count: 1, Drop: true})
	always := c.InterceptKafka(KafkaRule{Delay: 1})
	onBroker2 := c.InterceptKafka(KafkaRule{Brokers: []int32{2}, Drop: true})
	steps := []struct {
		info      broker.RequestInfo
		drop      bool
		delay     bool
		onceHits  int
		alwaysHit int
	}{
		{produce, true, false, 1, 0},
		{produce, false, true, 1, 1}, // once is used up and gone
		{fetch, false, true, 1, 2},
		{broker.RequestInfo{Key: 1, ClientID: harnessClientID}, false, false, 1, 2},
	}
	for i, s := range steps {
		act := c.hooks.kafka(s.info)
		if act.Drop != s.drop || (act.Delay > 0) != s.delay || once.Hits() != s.onceHits || always.Hits() != s.alwaysHit {
			t.Fatalf("step %d: %+v, hits once %d always %d", i, act, once.Hits(), always.Hits())
		}
	}
	if n := len(*c.hooks.kafkaRules.Load()); n != 2 {
		t.Fatalf("%d rules left, want 2 (the one-shot gone)", n)
	}
	if onBroker2.Hits() != 0 {
		t.Fatal("a rule for broker 2 saw broker 1's requests (it is behind a persistent match-all)")
	}
	always.Remove()
	if act := c.hooks.kafka(broker.RequestInfo{Broker: 2}); !act.Drop {
		t.Fatalf("broker 2's request: %+v, want the broker-2 rule", act)
	}
}

// TestErrorResponse: the response mirrors the request's topics and
// partitions, every error code set.
func TestErrorResponse(t *testing.T) {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	for _, name := range []string{"a", "b"} {
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = name
		for p := int32(0); p < 2; p++ {
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = p
			rp.Records = []byte{1, 2, 3}
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp := ErrorResponse(req, 6).(*kmsg.ProduceResponse)
	if resp.GetVersion() != 9 || len(resp.Topics) != 2 {
		t.Fatalf("response %+v", resp)
	}
	for i, rt := range resp.Topics {
		if rt.Topic != req.Topics[i].Topic || len(rt.Partitions) != 2 {
			t.Fatalf("topic %d: %+v", i, rt)
		}
		for j, p := range rt.Partitions {
			if p.Partition != int32(j) || p.ErrorCode != 6 || p.LogStartOffset != -1 {
				t.Fatalf("topic %s partition %d: %+v", rt.Topic, j, p)
			}
		}
	}
	hb := ErrorResponse(kmsg.NewPtrHeartbeatRequest(), 27).(*kmsg.HeartbeatResponse)
	if hb.ErrorCode != 27 {
		t.Fatalf("heartbeat %+v", hb)
	}
}
