package replication

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestFollowersHoldTheLeadersBytes: a topic with replication factor 3;
// records produced with acks=all are on all three brokers' logs, at the
// same offsets, byte for byte (the leader's batches with its leader
// epoch), and the leader's replication-offset-checkpoint (written at
// shutdown) holds the high watermark.
func TestFollowersHoldTheLeadersBytes(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(30*time.Second))
	createTopic(t, cl, "r3", 1, 3, nil)
	p := client(t, cl, kgo.DefaultProduceTopic("r3"), kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx := ctxT(t)
	const n = 200
	for i := 0; i < n; i += 20 {
		var rs []*kgo.Record
		for j := i; j < i+20; j++ {
			rs = append(rs, kgo.StringRecord("v"+strconv.Itoa(j)))
		}
		if err := p.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	got := consumeAll(t, cl, "r3", n)
	for i, r := range got {
		if string(r.Value) != "v"+strconv.Itoa(i) || r.Offset != int64(i) {
			t.Fatalf("record %d: offset %d value %q", i, r.Offset, r.Value)
		}
	}
	leader := leaderOf(t, cl, "r3", 0)
	for _, e := range cl.Brokers {
		e.Stop()
	}
	start0, want := logBytes(t, cl.Brokers[0], "r3", 0)
	if len(want) == 0 {
		t.Fatal("broker 1 holds no data")
	}
	for _, e := range cl.Brokers[1:] {
		start, data := logBytes(t, e, "r3", 0)
		if start != start0 || !bytes.Equal(data, want) {
			t.Fatalf("broker %d: log start %d, %d bytes; broker 1: start %d, %d bytes", e.Config.BrokerID, start, len(data), start0, len(want))
		}
	}
	// A follower learns the high watermark from its next fetch's answer,
	// so its checkpoint may lag the leader's.
	for _, e := range cl.Brokers {
		hw := readCheckpoint(t, e, "r3", 0)
		if e.Config.BrokerID == leader && hw != n || hw <= 0 || hw > n {
			t.Fatalf("broker %d (leader %d): checkpointed high watermark %d, want %d on the leader", e.Config.BrokerID, leader, hw, n)
		}
	}
}

// TestReplicaFetchFromNonReplicaRefused: a Fetch with the replica id of
// a broker outside the partition's assignment, or of no broker at all, is
// refused as Kafka refuses it, and the leader's log is untouched.
func TestReplicaFetchFromNonReplicaRefused(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(30*time.Second))
	// RF 2 over 3 brokers: one broker is no replica of p0.
	createTopic(t, cl, "nr", 1, 2, nil)
	c := client(t, cl)
	ctx := ctxT(t)
	if err := c.ProduceSync(ctx, &kgo.Record{Topic: "nr", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("nr")
	md.Topics = append(md.Topics, mt)
	mresp, err := md.RequestWith(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	mp := mresp.Topics[0].Partitions[0]
	outsider := int32(-1)
	for id := int32(1); id <= 3; id++ {
		if !containsID(mp.Replicas, id) {
			outsider = id
		}
	}
	for _, tc := range []struct {
		replica, epoch int32
		want           int16
	}{
		{outsider, -1, kerr.NotLeaderForPartition.Code},
		{outsider, mp.LeaderEpoch, kerr.UnknownLeaderEpoch.Code},
		{99, mp.LeaderEpoch, kerr.UnknownLeaderEpoch.Code},
	} {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = tc.replica, 10, 1<<20, -1
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic, ft.TopicID = "nr", mresp.Topics[0].TopicID
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.CurrentLeaderEpoch, fp.PartitionMaxBytes = 0, 0, tc.epoch, 1<<20
		fp.LastFetchedEpoch = 99 // would diverge, if it were looked at
		ft.Partitions = append(ft.Partitions, fp)
		req.Topics = append(req.Topics, ft)
		resp, err := req.RequestWith(ctx, c.Broker(int(mp.Leader)))
		if err != nil {
			t.Fatal(err)
		}
		rp := resp.Topics[0].Partitions[0]
		if rp.ErrorCode != tc.want || len(rp.RecordBatches) != 0 {
			t.Fatalf("replica %d epoch %d: error %d with %d bytes, want %d", tc.replica, tc.epoch, rp.ErrorCode, len(rp.RecordBatches), tc.want)
		}
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "nr"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	lresp, err := lo.RequestWith(ctx, c.Broker(int(mp.Leader)))
	if err != nil || lresp.Topics[0].Partitions[0].Offset != 1 {
		t.Fatalf("leader's end after the refused fetches: %+v %v", lresp, err)
	}
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

var _ = zk.ErrNoNode
var _ = context.Background
