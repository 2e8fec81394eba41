package clusterops

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestUncleanElection: u-0 on [1 2] (unclean.leader.election.enable
// false). Broker 2 stops (the ISR is [1]), then broker 1: u-0 is offline
// and stays so when broker 2 returns, outside the ISR. A PREFERRED
// election answers PREFERRED_LEADER_NOT_AVAILABLE (broker 1 is down); an
// UNCLEAN one makes broker 2 the leader, alone in the ISR.
func TestUncleanElection(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fast(0))
	createAssigned(t, cl, "u", [][]int32{{1, 2}})
	z := cl.Brokers[0].ZK()
	waitStates(t, cl, z, "u", 1, "both in the ISR", allInISR(2))
	cl.Broker(2).Stop()
	waitStates(t, cl, z, "u", 1, "ISR [1]", func(ss []partitionState) bool { return len(ss[0].ISR) == 1 })
	cl.Broker(1).Stop()
	waitStates(t, cl, z, "u", 1, "offline", func(ss []partitionState) bool { return ss[0].Leader == -1 })
	cl.Broker(2).Start()
	if s, err := readState(t, cl, z, "u", 0); err != nil || s.Leader != -1 {
		t.Fatalf("u-0 after broker 2 returned: %+v %v, want still offline", s, err)
	}

	adm := kadm.NewClient(client(t, cl))
	set := kadm.TopicsSet{}
	set.Add("u", 0)
	rs, err := adm.ElectLeaders(ctxT(t), kadm.ElectPreferredReplica, set)
	if err != nil {
		t.Fatal(err)
	}
	if r := rs["u"][0]; !errors.Is(r.Err, kerr.PreferredLeaderNotAvailable) {
		t.Errorf("PREFERRED with broker 1 down: %v, want PREFERRED_LEADER_NOT_AVAILABLE", r.Err)
	}
	rs, err = adm.ElectLeaders(ctxT(t), kadm.ElectLiveReplica, set)
	if err != nil {
		t.Fatal(err)
	}
	if r := rs["u"][0]; r.Err != nil {
		t.Fatalf("UNCLEAN: %v (%s)", r.Err, r.ErrMessage)
	}
	waitStates(t, cl, z, "u", 1, "led by 2 alone", func(ss []partitionState) bool {
		return ss[0].Leader == 2 && len(ss[0].ISR) == 1 && ss[0].ISR[0] == 2
	})
}
