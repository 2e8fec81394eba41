package kafkago

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
)

func TestOversizedRequestClosesOnlyThatConnection(t *testing.T) {
	e := startBroker(t, func(c *broker.Config) { c.SocketRequestMaxBytes = 1 << 20 })
	bystander := dialRaw(t, e.Addr)
	bystander.roundTrip(kmsg.NewPtrApiVersionsRequest())
	for _, size := range []uint32{1<<20 + 1, 0xffffffff} {
		c := dialRaw(t, e.Addr)
		c.write(binary.BigEndian.AppendUint32(nil, size))
		if !c.closed() {
			t.Errorf("size %#x: connection not closed", size)
		}
	}
	garbage := dialRaw(t, e.Addr)
	garbage.write([]byte{0, 0, 0, 3, 1, 2, 3}) // shorter than a header
	if !garbage.closed() {
		t.Errorf("truncated header: connection not closed")
	}
	unknown := dialRaw(t, e.Addr)
	unknown.write([]byte{0, 0, 0, 10, 0x7f, 0x00, 0, 0, 0, 0, 1, 0xff, 0xff, 0}) // key 32512
	if !unknown.closed() {
		t.Errorf("unknown api key: connection not closed")
	}
	resp := bystander.roundTrip(kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("bystander: %+v", resp)
	}
}

func TestApiVersionsTooNewGetsV0Reply(t *testing.T) {
	e := startBroker(t)
	c := dialRaw(t, e.Addr)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	corr := c.send(&versioned{req, 9})
	body, err := c.readFrame(5e9)
	if err != nil {
		t.Fatal(err)
	}
	if int32(binary.BigEndian.Uint32(body)) != corr {
		t.Fatal("correlation id")
	}
	v0 := kmsg.NewPtrApiVersionsResponse()
	v0.Version = 0
	if err := v0.ReadFrom(body[4:]); err != nil {
		t.Fatalf("v0 decode: %v", err)
	}
	if v0.ErrorCode != kerr.UnsupportedVersion.Code || len(v0.ApiKeys) < 10 {
		t.Fatalf("reply %+v", v0)
	}
	want := map[int16][2]int16{0: {0, 10}, 1: {0, 13}, 2: {0, 7}, 3: {0, 12}, 18: {0, 3}, 22: {0, 4}, 11: {0, 9}}
	for _, k := range v0.ApiKeys {
		if w, ok := want[k.ApiKey]; ok && (k.MinVersion != w[0] || k.MaxVersion != w[1]) {
			t.Errorf("key %d: %d-%d, want %v", k.ApiKey, k.MinVersion, k.MaxVersion, w)
		}
	}
	// The connection stays open: v3 works next.
	if r := c.roundTrip(req).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 {
		t.Fatalf("v3 after fallback: %d", r.ErrorCode)
	}
}

// versioned sends a request with a version kmsg does not know.
type versioned struct {
	kmsg.Request
	v int16
}

func (r *versioned) GetVersion() int16 { return r.v }

func TestCorruptBatchRejected(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "crc", 1)
	c := dialRaw(t, e.Addr)
	b := buildBatch(-1, -1, -1, nowMs(), "hello")
	b[len(b)-2] ^= 0xff
	if r := produceRaw(c, "crc", 0, b); r.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("bad CRC: error %d, want CORRUPT_MESSAGE", r.ErrorCode)
	}
	big := buildBatch(-1, -1, -1, nowMs(), string(make([]byte, 1100000)))
	if r := produceRaw(c, "crc", 0, big); r.ErrorCode != kerr.MessageTooLarge.Code {
		t.Fatalf("big batch: error %d, want MESSAGE_TOO_LARGE", r.ErrorCode)
	}
	legacy := buildBatch(-1, -1, -1, nowMs(), "old")
	legacy[16] = 1
	if r := produceRaw(c, "crc", 0, legacy); r.ErrorCode != kerr.UnsupportedForMessageFormat.Code && r.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("magic 1: error %d", r.ErrorCode)
	}
	if hw := listOffset(t, e, "crc", 0, -1); hw != 0 {
		t.Fatalf("rejected batches were appended: hw %d", hw)
	}
	if r := produceRaw(c, "crc", 7, buildBatch(-1, -1, -1, nowMs(), "x")); r.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("partition 7: %d", r.ErrorCode)
	}
}

func TestUnknownTopicWithoutAutoCreate(t *testing.T) {
	e := startBroker(t, func(c *broker.Config) { c.AutoCreateTopics = false })
	c := dialRaw(t, e.Addr)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("missing")
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = true
	resp := c.roundTrip(req).(*kmsg.MetadataResponse)
	if resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("metadata: %d", resp.Topics[0].ErrorCode)
	}
	if r := produceRaw(c, "missing", 0, buildBatch(-1, -1, -1, nowMs(), "x")); r.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce: %d", r.ErrorCode)
	}
	f := c.roundTrip(fetchReq("missing", 0, 0, 0)).(*kmsg.FetchResponse)
	if f.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("fetch: %d", f.Topics[0].Partitions[0].ErrorCode)
	}
}

func TestMetadataAutoCreates(t *testing.T) {
	e := startBroker(t, func(c *broker.Config) { c.NumPartitions = 3 })
	c := dialRaw(t, e.Addr)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("auto")
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = true
	// As Kafka, the request that creates the topic is told
	// LEADER_NOT_AVAILABLE; the topic is there once the controller's
	// UpdateMetadata named it.
	resp := c.roundTrip(req).(*kmsg.MetadataResponse)
	if tp := resp.Topics[0]; tp.ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Fatalf("metadata that creates: %+v", tp)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		resp = c.roundTrip(req).(*kmsg.MetadataResponse)
		if resp.Topics[0].ErrorCode != kerr.LeaderNotAvailable.Code || time.Now().After(deadline) {
			break
		}
	}
	tp := resp.Topics[0]
	if tp.ErrorCode != 0 || len(tp.Partitions) != 3 || tp.TopicID == [16]byte{} || resp.ControllerID != 0 ||
		resp.ClusterID == nil || len(resp.Brokers) != 1 {
		t.Fatalf("metadata: %+v", resp)
	}
	req.Topics[0].Topic = kmsg.StringPtr("bad name!")
	if resp := c.roundTrip(req).(*kmsg.MetadataResponse); resp.Topics[0].ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("invalid auto-create: %d", resp.Topics[0].ErrorCode)
	}
}
