package ensemble

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestStartupFiveVoters starts five voters one at a time in myid order:
// nothing is served until the third is up; then server 3 leads (the most
// recent log, then the highest myid, as ZooKeeper elects); the fourth and
// fifth join as followers and the leader does not change.
func TestStartupFiveVoters(t *testing.T) {
	e := zkserver.NewZkafkaEnsemble(t, zkserver.EnsembleOptions{
		Options: zkserver.Options{TickTime: tickTime, StartTimeout: 20 * time.Second},
		Voters:  5,
	})
	s := e.Servers
	s[0].Launch()
	s[1].Launch()
	// Two of five: no quorum. Give them several election timeouts.
	time.Sleep(1500 * time.Millisecond)
	for _, x := range s[:2] {
		if m := x.Mode(); m != "" {
			t.Fatalf("server %d reports Mode %q with two of five voters up", x.ID(), m)
		}
		out, _ := zkserver.FourLetterWord(x.Addr(), "srvr", time.Second)
		t.Logf("server %d before quorum: %q", x.ID(), out)
	}
	s[2].Launch()
	for _, x := range s[:3] {
		x.WaitReady()
	}
	waitFor(t, 5*time.Second, "server 3 leads", func() error {
		if m := s[2].Mode(); m != "leader" {
			return fmt.Errorf("modes %s", modes(e))
		}
		return nil
	})
	c := dial(t, e.Addrs()[:3], 4*time.Second)
	if _, err := c.Create("/startup", []byte("3"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for _, x := range s[3:] {
		x.Launch()
		x.WaitReady()
		waitFor(t, 5*time.Second, fmt.Sprintf("server %d follows", x.ID()), func() error {
			if m := x.Mode(); m != "follower" {
				return fmt.Errorf("modes %s", modes(e))
			}
			return nil
		})
	}
	time.Sleep(time.Second)
	for _, x := range s {
		want := "follower"
		if x.ID() == 3 {
			want = "leader"
		}
		if m := x.Mode(); m != want {
			t.Fatalf("server %d is %q, want %q (modes %s)", x.ID(), m, want, modes(e))
		}
	}
	mntr, err := zkserver.FourLetterWord(s[2].Addr(), "mntr", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"zk_server_state\tleader", "zk_learners\t4", "zk_synced_followers\t4"} {
		if !contains(mntr, want) {
			t.Fatalf("leader's mntr lacks %q:\n%s", want, mntr)
		}
	}
	agree(t, e, "/")
	t.Logf("modes after start-up: %s", modes(e))
}

func contains(s, sub string) bool {
	return len(s) >= len(sub) && (func() bool {
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				return true
			}
		}
		return false
	})()
}
