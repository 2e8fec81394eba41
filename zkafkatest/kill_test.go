package zkafkatest_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestKillBrokerLeavesRegistration: Kill, unlike Stop, leaves the broker's
// ZooKeeper session open (its registration stays until the session
// expires); a restart on the same data serves every acked record, each
// fsynced before its ack (log.flush.interval.messages=1).
func TestKillBrokerLeavesRegistration(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1), zkafkatest.BrokerSessionTimeout(2*time.Second),
		zkafkatest.BrokerConfig("log.flush.interval.messages", "1"))
	conn, _ := zkSession(t, cl, 10*time.Second)
	var acked []string
	c := client(t, cl, kgo.RequiredAcks(kgo.AllISRAcks()))
	for i := range 20 {
		v := fmt.Sprint("r", i)
		produce(t, c, "t", v)
		acked = append(acked, v)
	}
	must(t, cl.Kill(zkafkatest.Broker(1)))
	if ok, _, err := conn.Exists("/brokers/ids/1"); err != nil || !ok {
		t.Fatalf("after Kill /brokers/ids/1 exists=%v err=%v, want it left until the session expires", ok, err)
	}
	must(t, cl.StartMember(zkafkatest.Broker(1)))
	if got := consume(t, cl, "t", len(acked)); !slices.Equal(got, acked) {
		t.Fatalf("after a kill and restart consumed %v, want %v", got, acked)
	}
	must(t, cl.Stop(zkafkatest.Broker(1)))
	if ok, _, err := conn.Exists("/brokers/ids/1"); err != nil || ok {
		t.Fatalf("after Stop /brokers/ids/1 exists=%v err=%v, want it gone", ok, err)
	}
}

// TestKillZooKeeperMember: in an ensemble of three, killing the server a
// go-zookeeper client is connected to moves the client to another one,
// which keeps serving reads and writes; the killed server, restarted, has
// every write.
func TestKillZooKeeperMember(t *testing.T) {
	cl := zkafkatest.StartZooKeeper(t, zkafkatest.Ensemble(3))
	conn, events := zkSession(t, cl, 10*time.Second)
	_, err := conn.Create("/a", []byte("1"), 0, worldACL)
	must(t, err)
	victim := memberAt(t, cl, conn.Server())
	must(t, cl.Kill(victim))
	waitState(t, events, zk.StateHasSession) // reconnected elsewhere, same session
	if now := memberAt(t, cl, conn.Server()); now == victim {
		t.Fatalf("still connected to the killed %s", victim)
	}
	create(t, conn, "/b")
	must(t, cl.StartMember(victim))
	// Read from the restarted server alone: it caught up.
	addr, err := cl.Addr(victim)
	must(t, err)
	only, onlyEvents, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	must(t, err)
	defer only.Close()
	waitState(t, onlyEvents, zk.StateHasSession)
	_, err = only.Sync("/")
	must(t, err)
	for _, p := range []string{"/a", "/b"} {
		if ok, _, err := only.Exists(p); err != nil || !ok {
			t.Fatalf("restarted %s: %s exists=%v err=%v", victim, p, ok, err)
		}
	}
}

// memberAt returns the member whose client address is addr.
func memberAt(t *testing.T, cl *zkafkatest.Cluster, addr string) zkafkatest.Member {
	t.Helper()
	for id := int32(1); id <= 9; id++ {
		m := zkafkatest.ZooKeeperServer(id)
		if a, err := cl.Addr(m); err == nil && a == addr {
			return m
		}
	}
	t.Fatalf("no ZooKeeper server at %s", addr)
	return zkafkatest.Member{}
}
