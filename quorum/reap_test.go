package quorum

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestOnlyTheLeaderReaps: in an ensemble of three participants and an
// observer, only the leader proposes the deletes of empty containers and
// expired TTL nodes (as ZooKeeper runs its ContainerManager on the leader
// only); after the leader stops, the new leader reaps.
//
// Every server sees a node become a candidate at the same moment (when the
// change that empties it is applied, or when its TTL runs out) and the first
// server to check proposes the delete: with several rounds, a follower or
// the observer would propose some of them if it reaped at all.
func TestOnlyTheLeaderReaps(t *testing.T) {
	ens := startInprocEnsemble(t, []bool{false, false, false, true})
	leader := ens.waitLeader(t)
	c := reapClient(t, ens.servers[3].Addr().String()) // on the observer
	for i := range 6 {
		reapRound(t, c, fmt.Sprintf("/a%d", i))
	}
	ens.checkOnlyReaper(t, leader)

	ens.servers[leader].Close()
	ens.stopped[leader] = true
	next := ens.waitLeader(t)
	for _, l := range ens.logs {
		l.reset()
	}
	for i := range 6 {
		reapRound(t, c, fmt.Sprintf("/b%d", i))
	}
	ens.checkOnlyReaper(t, next)
}

// reapRound empties a container and creates a TTL node, and waits until
// both are reaped.
func reapRound(t *testing.T, c *zk.Conn, prefix string) {
	t.Helper()
	acl := zk.WorldACL(zk.PermAll)
	container, ttl := prefix+"-container", prefix+"-ttl"
	if _, err := c.CreateContainer(container, nil, zk.FlagContainer, acl); err != nil {
		t.Fatalf("create container %s: %v", container, err)
	}
	if _, err := c.Create(container+"/child", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(container+"/child", -1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTTL(ttl, nil, zk.FlagTTL, acl, time.Millisecond); err != nil {
		t.Fatalf("create TTL node %s: %v", ttl, err)
	}
	for _, p := range []string{container, ttl} {
		failstopCheckFor(t, 30*time.Second, p+" to be reaped", func() bool {
			ok, _, err := c.Exists(p)
			return err == nil && !ok
		})
	}
}

// checkOnlyReaper checks that server leader, and no other, proposed
// reaping deletes.
func (e *inprocEnsemble) checkOnlyReaper(t *testing.T, leader int) {
	t.Helper()
	if now := e.agreedLeader(); now != leader {
		t.Fatalf("the leadership moved during the test (server %d, then %d)", leader+1, now+1)
	}
	for i, l := range e.logs {
		n := l.count()
		switch {
		case i == leader && n == 0:
			t.Errorf("the leader, server %d, proposed no reaping delete", i+1)
		case i != leader && n > 0:
			t.Errorf("server %d (not the leader, %d is) proposed %d reaping deletes: %v", i+1, leader+1, n, l.paths())
		}
	}
}

func reapClient(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, _ := failstopClient(t, addr)
	return c
}
