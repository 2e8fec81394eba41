package ensemble

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestFollowerCatchesUpBySnapshot: with a small snapCount the leader
// compacts its log while a follower is down; the restarted follower is too
// far behind for the log and catches up from a snapshot the leader sends
// (its log says so), then serves the same data as the others, ephemerals of
// a live session included.
func TestFollowerCatchesUpBySnapshot(t *testing.T) {
	e := zkserver.NewZkafkaEnsemble(t, zkserver.EnsembleOptions{
		Options: zkserver.Options{TickTime: tickTime, StartTimeout: 20 * time.Second,
			ExtraConfig: []string{"snapCount=50"}},
		Voters: 3,
	})
	e.StartAll()
	leader := e.WaitLeader(5 * time.Second)
	if leader == nil {
		t.Fatalf("no leader: %s", modes(e))
	}
	var down *zkserver.Server
	var up []string
	for _, s := range e.Servers {
		if s != leader && down == nil {
			down = s
			continue
		}
		up = append(up, s.Addr())
	}
	c := dial(t, up, 4*time.Second)
	if _, err := c.Create("/snap", []byte("before"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the follower has /snap", func() error {
		f := dial(t, []string{down.Addr()}, 4*time.Second)
		defer f.Close()
		if ok, _, err := f.Exists("/snap"); err != nil || !ok {
			return fmt.Errorf("exists %v %v", ok, err)
		}
		return nil
	})
	down.Kill()

	// Far more than snapCount writes while it is down: creates, sets,
	// deletes and ephemerals.
	const n = 600
	for i := range n {
		p := fmt.Sprintf("/snap/n%04d", i)
		if _, err := c.Create(p, []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		switch i % 5 {
		case 1:
			if _, err := c.Set(p, []byte(fmt.Sprintf("set-%d", i)), -1); err != nil {
				t.Fatal(err)
			}
		case 2:
			if err := c.Delete(p, -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 3 {
		if _, err := c.Create(fmt.Sprintf("/snap/eph%d", i), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Set("/snap", []byte("after"), -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the leader compacts its log", func() error {
		b, _ := os.ReadFile(leader.LogPath())
		if strings.Count(string(b), "raftnode: snapshot written") < 3 {
			return fmt.Errorf("leader log:\n%s", leader.LogTail(5))
		}
		return nil
	})

	down.Launch()
	down.WaitReady()
	waitFor(t, 10*time.Second, "the restarted follower catches up", func() error {
		f := dial(t, []string{down.Addr()}, 4*time.Second)
		defer f.Close()
		d, _, err := f.Get("/snap")
		if err != nil || string(d) != "after" {
			return fmt.Errorf("/snap = %q, %v", d, err)
		}
		return nil
	})
	b, err := os.ReadFile(down.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "raftnode: restored a snapshot from the leader") {
		t.Fatalf("the follower did not catch up from a snapshot; its log:\n%s", down.LogTail(30))
	}
	if m := down.Mode(); m != "follower" {
		t.Fatalf("restarted server is %q, want follower (%s)", m, modes(e))
	}
	nodes := agree(t, e, "/snap")
	if want := n - n/5 + 3; len(nodes) != want {
		t.Fatalf("%d nodes under /snap, want %d", len(nodes), want)
	}
	// The follower knows the live session: its ephemerals go when it ends.
	c.Close()
	waitFor(t, 10*time.Second, "the ephemerals go with their session", func() error {
		f := dial(t, []string{down.Addr()}, 4*time.Second)
		defer f.Close()
		if _, err := f.Sync("/snap"); err != nil {
			return err
		}
		if ok, _, err := f.Exists("/snap/eph0"); err != nil || ok {
			return fmt.Errorf("exists %v %v", ok, err)
		}
		return nil
	})
}
