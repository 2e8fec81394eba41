package clusterops

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestPreferredElectionRestoresBalance: 6 partitions, RF 3, two led by
// each broker. Broker 1 restarts: its partitions move to 2 and 3 and stay
// there after it is back in every ISR (no balance check runs). A
// PREFERRED kadm.ElectLeaders of every partition moves them back: two
// per broker again. Asked again, each partition named answers
// ELECTION_NOT_NEEDED; an unknown partition UNKNOWN_TOPIC_OR_PARTITION;
// UNCLEAN with live leaders ELECTION_NOT_NEEDED.
func TestPreferredElectionRestoresBalance(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fast(0))
	createTopic(t, cl, "bal", 6, 3)
	z := cl.Brokers[0].ZK()
	before := leadersPerBroker(waitStates(t, cl, z, "bal", 6, "all in the ISR", allInISR(3)))
	if before[1] != 2 || before[2] != 2 || before[3] != 2 {
		t.Fatalf("leaders per broker at the start: %v, want 2 each", before)
	}
	cl.Broker(1).Restart()
	after := leadersPerBroker(waitStates(t, cl, z, "bal", 6, "broker 1 back in every ISR", allInISR(3)))
	if after[1] != 0 {
		t.Fatalf("leaders per broker after broker 1 restarted: %v, want none on 1", after)
	}
	t.Logf("leaders per broker: before %v, after the restart %v", before, after)

	adm := kadm.NewClient(client(t, cl))
	rs, err := adm.ElectLeaders(ctxT(t), kadm.ElectPreferredReplica, nil)
	if err != nil {
		t.Fatalf("ElectLeaders: %v", err)
	}
	if len(rs["bal"]) != 2 {
		t.Errorf("ElectLeaders of all partitions answered %v, want bal's two partitions of broker 1", rs)
	}
	for _, r := range rs["bal"] {
		if r.Err != nil {
			t.Errorf("bal-%d: %v (%s)", r.Partition, r.Err, r.ErrMessage)
		}
	}
	balanced := waitStates(t, cl, z, "bal", 6, "two leaders per broker", func(ss []partitionState) bool {
		m := leadersPerBroker(ss)
		return m[1] == 2 && m[2] == 2 && m[3] == 2
	})
	t.Logf("leaders per broker after ElectLeaders: %v", leadersPerBroker(balanced))

	set := kadm.TopicsSet{}
	set.Add("bal", 0, 1)
	set.Add("nope", 0)
	rs, err = adm.ElectLeaders(ctxT(t), kadm.ElectPreferredReplica, set)
	if err != nil {
		t.Fatalf("ElectLeaders: %v", err)
	}
	for _, p := range []int32{0, 1} {
		if r := rs["bal"][p]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
			t.Errorf("bal-%d asked again: %v, want ELECTION_NOT_NEEDED", p, r.Err)
		}
	}
	if r := rs["nope"][0]; !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("nope-0: %v, want UNKNOWN_TOPIC_OR_PARTITION", r.Err)
	}
	rs, err = adm.ElectLeaders(ctxT(t), kadm.ElectLiveReplica, set)
	if err != nil {
		t.Fatalf("ElectLeaders UNCLEAN: %v", err)
	}
	if r := rs["bal"][0]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		t.Errorf("bal-0 UNCLEAN with a live leader: %v, want ELECTION_NOT_NEEDED", r.Err)
	}
}

// TestBalanceCheckRestoresBalance: with auto.leader.rebalance.enable and
// a check every second, the controller itself moves leadership back to
// the preferred replicas once a restarted broker is in the ISRs.
func TestBalanceCheckRestoresBalance(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fast(time.Second))
	createTopic(t, cl, "auto", 3, 3)
	z := cl.Brokers[0].ZK()
	start := waitStates(t, cl, z, "auto", 3, "all in the ISR", allInISR(3))
	mine := -1 // the partition broker 2 leads
	for p, s := range start {
		if s.Leader == 2 {
			mine = p
		}
	}
	if mine < 0 {
		t.Fatalf("broker 2 leads nothing: %+v", start)
	}
	cl.Broker(2).Restart()
	ss := waitStates(t, cl, z, "auto", 3, "one leader per broker again", func(ss []partitionState) bool {
		m := leadersPerBroker(ss)
		return m[1] == 1 && m[2] == 1 && m[3] == 1 && allInISR(3)(ss)
	})
	if ss[mine].Leader != 2 || ss[mine].LeaderEpoch < start[mine].LeaderEpoch+2 {
		t.Errorf("auto-%d: %+v, from %+v: its leadership never moved away and back", mine, ss[mine], start[mine])
	}
}
