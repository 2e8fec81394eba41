package kafkaacl

import (
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLogAdminAPIsAuthorized: DeleteRecords needs DELETE on the topic,
// DescribeLogDirs DESCRIBE on the cluster, DescribeProducers READ on the
// topic, DescribeTopicPartitions DESCRIBE on the topic (implied by READ
// and WRITE; topics listed in full leave the others out), as Kafka 3.7's
// KafkaApis checks them; the super user (admin) passes every check.
func TestLogAdminAPIsAuthorized(t *testing.T) {
	m := newMatrix(t)
	leader := m.leaders["fin-ledger"]
	deleteRecords := func(who string) int16 {
		req := kmsg.NewPtrDeleteRecordsRequest()
		req.TimeoutMillis = 10000
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = "fin-ledger"
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Offset = 0
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return on[*kmsg.DeleteRecordsResponse](t, m.client(who), leader, req).Topics[0].Partitions[0].ErrorCode
	}
	logDirs := func(who string) int16 {
		return on[*kmsg.DescribeLogDirsResponse](t, m.client(who), 1, kmsg.NewPtrDescribeLogDirsRequest()).ErrorCode
	}
	producers := func(who string) int16 {
		req := kmsg.NewPtrDescribeProducersRequest()
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = "fin-ledger", []int32{0}
		req.Topics = append(req.Topics, rt)
		return on[*kmsg.DescribeProducersResponse](t, m.client(who), leader, req).Topics[0].Partitions[0].ErrorCode
	}
	topicPartitions := func(who string, topics ...string) map[string]int16 {
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		req.ResponsePartitionLimit = 100
		for _, n := range topics {
			rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
			rt.Topic = n
			req.Topics = append(req.Topics, rt)
		}
		out := map[string]int16{}
		for _, rt := range on[*kmsg.DescribeTopicPartitionsResponse](t, m.client(who), 1, req).Topics {
			out[*rt.Topic] = rt.ErrorCode
		}
		return out
	}
	denied := kerr.TopicAuthorizationFailed.Code
	for _, c := range []struct {
		what      string
		got, want int16
	}{
		{"DeleteRecords by alice (WRITE, READ)", deleteRecords(alice), denied},
		{"DeleteRecords by admin", deleteRecords(admin), 0},
		{"DescribeLogDirs by alice", logDirs(alice), kerr.ClusterAuthorizationFailed.Code},
		{"DescribeLogDirs by admin", logDirs(admin), 0},
		{"DescribeProducers by bob (DESCRIBE)", producers(bob), denied},
		{"DescribeProducers by alice (READ)", producers(alice), 0},
	} {
		if c.got != c.want {
			t.Errorf("%s: code %d, want %d", c.what, c.got, c.want)
		}
	}
	if got := topicPartitions(alice, "fin-ledger", "other"); got["fin-ledger"] != 0 || got["other"] != denied {
		t.Errorf("DescribeTopicPartitions by alice of fin-ledger and other: %v", got)
	}
	if got := topicPartitions(alice); len(got) != 2 || got["fin-ledger"] != 0 || got["fin-secret"] != 0 {
		t.Errorf("DescribeTopicPartitions by alice of every topic: %v, want fin-ledger and fin-secret", got)
	}
	// Every topic, __consumer_offsets too once a group made it.
	got := topicPartitions(bob)
	delete(got, "__consumer_offsets")
	if want := map[string]int16{"fin-ledger": 0, "fin-secret": 0, "other": 0}; !maps.Equal(got, want) {
		t.Errorf("DescribeTopicPartitions by bob (DESCRIBE on *) of every topic: %v, want %v", got, want)
	}
}
