package kafkago

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// truthAssignment is a topic's assignment over three brokers.
var truthAssignment = [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}}

// metadataMatches reports (with what differs) whether the Metadata that
// broker e answers shows the live brokers, and for every partition of
// topic the state znode's leader, leader epoch and ISR, the assignment's
// replicas and, as offline replicas, the replicas not live.
func metadataMatches(t *testing.T, e *env, live []int32, topic string, assignment [][]int32) (bool, string) {
	t.Helper()
	adm := kadm.NewClient(e.Client())
	defer adm.Close()
	ctx := ctxT(t)
	bs, err := adm.ListBrokers(ctx)
	if err != nil {
		return false, err.Error()
	}
	if !slices.Equal(bs.NodeIDs(), live) {
		return false, fmt.Sprintf("brokers %v", bs.NodeIDs())
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dr, err := dc.RequestWith(ctx, e.Client())
	if err != nil || len(dr.Brokers) != len(live) {
		return false, "DescribeCluster"
	}
	td, err := adm.ListTopics(ctx, topic)
	if err != nil || len(td[topic].Partitions) != len(assignment) {
		return false, "topic"
	}
	z := e.ZK()
	for _, p := range td[topic].Partitions.Sorted() {
		s, err := readState(t, z, e, topic, int(p.Partition))
		if err != nil {
			return false, err.Error()
		}
		var offline []int32
		for _, r := range assignment[p.Partition] {
			if !slices.Contains(live, r) {
				offline = append(offline, r)
			}
		}
		leader := s.Leader
		if !slices.Contains(live, leader) {
			leader = -1
		}
		if p.Leader != leader || p.LeaderEpoch != s.LeaderEpoch || !slices.Equal(p.ISR, s.ISR) ||
			!slices.Equal(p.Replicas, assignment[p.Partition]) || !slices.Equal(p.OfflineReplicas, offline) {
			return false, "partition differs from its state znode"
		}
	}
	return true, ""
}

// waitTruth waits (bounded) until every running broker's Metadata matches.
func waitTruth(t *testing.T, cl *kafkaenv.Cluster, live []int32, topic string, assignment [][]int32) {
	t.Helper()
	for _, id := range live {
		var why string
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			var ok bool
			if ok, why = metadataMatches(t, cl.Broker(id), live, topic, assignment); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("broker %d's Metadata of %s never told the truth: %s", id, topic, why)
			}
		}
	}
}

// TestMetadataTellsTheTruth: three brokers, a topic of RF 3 and one of
// RF 2 on brokers 1 and 2. Every broker's Metadata (kadm ListBrokers and
// ListTopics) and DescribeCluster list every live broker and, for each
// partition, its replicas, the state znode's leader, leader epoch and
// ISR, and its replicas on dead brokers as offline replicas — before and
// after a broker stops (broker 3 too, which hosts no replica of the RF 2
// topic and learns of its leader change from UpdateMetadata alone), and
// after it returns.
func TestMetadataTellsTheTruth(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3)
	side := [][]int32{{1, 2}}
	createFullISR(t, cl, "truth", truthAssignment)
	createFullISR(t, cl, "side", side)
	all := []int32{1, 2, 3}
	waitTruth(t, cl, all, "truth", truthAssignment)
	waitTruth(t, cl, all, "side", side)
	cl.Broker(1).Stop()
	waitTruth(t, cl, []int32{2, 3}, "truth", truthAssignment)
	waitTruth(t, cl, []int32{2, 3}, "side", side)
	adm := kadm.NewClient(cl.Broker(3).Client())
	td, err := adm.ListTopics(ctxT(t), "truth", "side")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"truth", "side"} {
		for _, p := range td[name].Partitions {
			if p.Leader == 1 || p.Leader < 0 || slices.Contains(p.ISR, 1) || p.LeaderEpoch < 1 && p.Replicas[0] == 1 {
				t.Errorf("%s-%d after broker 1 left: %+v", name, p.Partition, p)
			}
		}
	}
	cl.Broker(1).Start()
	cl.Broker(2).WaitBrokers(3)
	waitTruth(t, cl, all, "truth", truthAssignment)
	waitTruth(t, cl, all, "side", side)
}
