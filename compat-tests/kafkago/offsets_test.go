package kafkago

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listOffset asks ListOffsets v7 for one partition at ts (-1 latest,
// -2 earliest, -3 max timestamp, else a time) and returns the offset.
func listOffset(t testing.TB, e *env, topic string, partition int32, ts int64) int64 {
	t.Helper()
	off, _, code := listOffsetTs(t, e, topic, partition, ts, 7)
	if code != 0 {
		t.Fatalf("ListOffsets %s/%d at %d: %v", topic, partition, ts, kerr.ErrorForCode(code))
	}
	return off
}

func listOffsetTs(t testing.TB, e *env, topic string, partition int32, ts int64, version int16) (int64, int64, int16) {
	t.Helper()
	c := dialRaw(t, e.Addr)
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID = version, -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.MaxNumOffsets = partition, ts, 1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.roundTrip(req).(*kmsg.ListOffsetsResponse)
	p := resp.Topics[0].Partitions[0]
	if version == 0 {
		if len(p.OldStyleOffsets) == 0 {
			return -1, -1, p.ErrorCode
		}
		return p.OldStyleOffsets[0], -1, p.ErrorCode
	}
	return p.Offset, p.Timestamp, p.ErrorCode
}

func TestListOffsetsByTime(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "times", 1)
	c := dialRaw(t, e.Addr)
	base := int64(1_700_000_000_000)
	for i := int64(0); i < 10; i++ { // batches of 3 records at base+1000*i
		b := buildBatch(-1, -1, -1, base+1000*i, "a", "b", "c")
		if r := produceRaw(c, "times", 0, b); r.ErrorCode != 0 {
			t.Fatalf("produce: %d", r.ErrorCode)
		}
	}
	for _, tc := range []struct{ ts, off, gotTs int64 }{
		{base, 0, base},
		{base + 1, 3, base + 1000},
		{base + 4500, 15, base + 5000},
		{base + 9000, 27, base + 9000},
		{base + 9001, -1, -1},
		{0, 0, base},
	} {
		off, ts, code := listOffsetTs(t, e, "times", 0, tc.ts, 7)
		if code != 0 || off != tc.off || ts != tc.gotTs {
			t.Errorf("time %d: offset %d ts %d code %d, want %d %d", tc.ts, off, ts, code, tc.off, tc.gotTs)
		}
	}
	if got := listOffset(t, e, "times", 0, -2); got != 0 {
		t.Errorf("earliest %d", got)
	}
	if got := listOffset(t, e, "times", 0, -1); got != 30 {
		t.Errorf("latest %d", got)
	}
	if off, ts, _ := listOffsetTs(t, e, "times", 0, -3, 7); off != 29 || ts != base+9000 {
		t.Errorf("max timestamp: %d %d", off, ts)
	}
	if off, _, code := listOffsetTs(t, e, "times", 0, -1, 0); code != 0 || off != 30 {
		t.Errorf("v0 latest: %d %d", off, code)
	}
	if _, _, code := listOffsetTs(t, e, "nope", 0, -1, 7); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: %d", code)
	}
}
