package replication

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestDescribeAdminAPIs: DescribeLogDirs, DescribeProducers and
// DescribeTopicPartitions on three brokers, through kadm (kmsg for 75,
// which kadm lacks), checked against the assignment Metadata gives and
// what was produced.
func TestDescribeAdminAPIs(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(10*time.Second))
	createTopic(t, cl, "dtp-a", 3, 2, nil)
	createTopic(t, cl, "dtp-b", 2, 3, nil)
	z := cl.Brokers[0].ZK()
	waitState(t, cl, z, "dtp-b", 0, "all in the ISR", isrIs(1, 2, 3))
	ctx := ctxT(t)
	before := time.Now().Add(-time.Second).UnixMilli()
	p := client(t, cl, kgo.DefaultProduceTopic("dtp-b"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 20 {
		if err := p.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	pid, epoch, err := p.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(client(t, cl))
	td, err := adm.ListTopics(ctx, "dtp-a", "dtp-b")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("DescribeLogDirs", func(t *testing.T) {
		all, err := adm.DescribeAllLogDirs(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for id := int32(1); id <= 3; id++ {
			dirs := all[id]
			dir := cl.Broker(id).Config.LogDirs[0]
			d, ok := dirs[dir]
			if len(dirs) != 1 || !ok || d.Err != nil || d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.UsableBytes > d.TotalBytes {
				t.Fatalf("broker %d: dirs %+v, want %s with its volume's sizes", id, dirs, dir)
			}
			for _, topic := range []string{"dtp-a", "dtp-b"} {
				for _, pd := range td[topic].Partitions {
					lp, held := d.Topics[topic][pd.Partition]
					if held != slices.Contains(pd.Replicas, id) {
						t.Fatalf("broker %d, %s-%d: described %v, replicas %v", id, topic, pd.Partition, held, pd.Replicas)
					}
					if held && lp.OffsetLag != 0 {
						t.Fatalf("broker %d, %s-%d: offset lag %d", id, topic, pd.Partition, lp.OffsetLag)
					}
				}
			}
			if lp := d.Topics["dtp-b"][0]; lp.Size == 0 {
				t.Fatalf("broker %d: dtp-b-0 has size 0 after 20 records", id)
			}
		}
		some, err := adm.DescribeAllLogDirs(ctx, kadm.TopicsSet{"dtp-b": {1: {}}})
		if err != nil {
			t.Fatal(err)
		}
		for id, dirs := range some {
			for _, d := range dirs {
				if len(d.Topics) != 1 || len(d.Topics["dtp-b"]) != 1 {
					t.Fatalf("broker %d asked for dtp-b-1 described %+v", id, d.Topics)
				}
			}
		}
	})

	t.Run("DescribeProducers", func(t *testing.T) {
		ds, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"dtp-b": {0: {}}})
		if err != nil {
			t.Fatal(err)
		}
		part := ds["dtp-b"].Partitions[0]
		dp, ok := part.ActiveProducers[pid]
		if part.Err != nil || len(part.ActiveProducers) != 1 || !ok {
			t.Fatalf("producers of dtp-b-0: %+v, want producer %d", part, pid)
		}
		if dp.ProducerEpoch != epoch || dp.LastSequence != 19 || dp.LastTimestamp < before ||
			dp.LastTimestamp > time.Now().UnixMilli() || dp.CoordinatorEpoch != -1 || dp.CurrentTxnStartOffset != -1 {
			t.Fatalf("producer %+v, want epoch %d, last sequence 19, a timestamp since %d", dp, epoch, before)
		}
		empty, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"dtp-b": {1: {}}})
		if err != nil || empty["dtp-b"].Partitions[1].Err != nil || len(empty["dtp-b"].Partitions[1].ActiveProducers) != 0 {
			t.Fatalf("producers of dtp-b-1: %+v %v, want none", empty, err)
		}
		req := kmsg.NewPtrDescribeProducersRequest()
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = "no-such-topic", []int32{0}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, client(t, cl).Broker(1))
		if err != nil || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("producers of an unknown topic: %+v %v", resp, err)
		}
	})

	t.Run("DescribeTopicPartitions", func(t *testing.T) {
		c := client(t, cl)
		describe := func(limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsResponse {
			t.Helper()
			req := kmsg.NewPtrDescribeTopicPartitionsRequest()
			req.ResponsePartitionLimit, req.Cursor = limit, cursor
			for _, n := range topics {
				rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
				rt.Topic = n
				req.Topics = append(req.Topics, rt)
			}
			resp, err := req.RequestWith(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		check := func(rt kmsg.DescribeTopicPartitionsResponseTopic, parts ...int32) {
			t.Helper()
			md := td[*rt.Topic]
			if rt.ErrorCode != 0 || rt.TopicID != md.ID || rt.IsInternal || len(rt.Partitions) != len(parts) {
				t.Fatalf("%s: %+v, want partitions %v", *rt.Topic, rt, parts)
			}
			for i, rp := range rt.Partitions {
				pd := md.Partitions[parts[i]]
				if rp.Partition != parts[i] || rp.ErrorCode != 0 || rp.LeaderID != pd.Leader || rp.LeaderEpoch != pd.LeaderEpoch ||
					!slices.Equal(rp.Replicas, pd.Replicas) || !slices.Equal(rp.ISR, pd.ISR) {
					t.Fatalf("%s-%d: %+v, Metadata has %+v", *rt.Topic, parts[i], rp, pd)
				}
			}
		}
		r := describe(4, nil, "dtp-b", "no-such-topic", "dtp-a")
		if len(r.Topics) != 2 || r.NextCursor == nil || r.NextCursor.Topic != "dtp-b" || r.NextCursor.Partition != 1 {
			t.Fatalf("first page: %+v", r)
		}
		check(r.Topics[0], 0, 1, 2)
		check(r.Topics[1], 0)
		r = describe(4, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-b", Partition: 1}, "dtp-b", "no-such-topic", "dtp-a")
		if len(r.Topics) != 2 || r.NextCursor != nil || r.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("second page: %+v", r)
		}
		check(r.Topics[0], 1)
		r = describe(3, nil)
		if len(r.Topics) != 1 || r.NextCursor == nil || r.NextCursor.Topic != "dtp-b" || r.NextCursor.Partition != 0 {
			t.Fatalf("all topics, 3 partitions: %+v", r)
		}
		check(r.Topics[0], 0, 1, 2)
		for _, cur := range []kmsg.DescribeTopicPartitionsRequestCursor{{Topic: "dtp-c"}, {Topic: "dtp-b"}, {Topic: "dtp-a", Partition: -1}} {
			r = describe(3, &cur, "dtp-a")
			if len(r.Topics) != 1 || r.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
				t.Fatalf("cursor %+v with topics [dtp-a]: %+v, want INVALID_REQUEST", cur, r)
			}
		}
	})
}
