package zkafkatest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestStartCluster: the default cluster is one ZooKeeper and broker 1,
// reachable by franz-go and go-zookeeper at the returned addresses, with a
// topic created by the option.
func TestStartCluster(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 3, 1))
	if got := cl.BrokerIDs(); !slices.Equal(got, []int32{1}) {
		t.Fatalf("BrokerIDs = %v", got)
	}
	if !strings.HasPrefix(cl.Bootstrap(), "127.0.0.1:") || !strings.HasPrefix(cl.ZooKeeper(), "127.0.0.1:") {
		t.Fatalf("Bootstrap %q ZooKeeper %q: not on 127.0.0.1", cl.Bootstrap(), cl.ZooKeeper())
	}
	produce(t, client(t, cl), "t", "a", "b")
	got := consume(t, cl, "t", 2)
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("consumed %v", got)
	}
	conn, _ := zkSession(t, cl, 10e9)
	ids, _, err := conn.Children("/brokers/ids")
	must(t, err)
	if !slices.Equal(ids, []string{"1"}) {
		t.Fatalf("/brokers/ids = %v", ids)
	}
	parts, _, err := conn.Children("/brokers/topics/t/partitions")
	must(t, err)
	if len(parts) != 3 {
		t.Fatalf("/brokers/topics/t/partitions = %v", parts)
	}
}

// TestStopAndStartKeepData: a broker stopped and started again keeps its
// records and its address; a ZooKeeper server stopped and started keeps
// its znodes.
func TestStopAndStartKeepData(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Topic("t", 1, 1))
	seeds := cl.Bootstrap()
	produce(t, client(t, cl), "t", "before")
	must(t, cl.Stop(zkafkatest.Broker(1)))
	if cl.Running(zkafkatest.Broker(1)) {
		t.Fatal("broker 1 still running after Stop")
	}
	must(t, cl.StartMember(zkafkatest.Broker(1)))
	if cl.Bootstrap() != seeds {
		t.Fatalf("address changed across a restart: %s, then %s", seeds, cl.Bootstrap())
	}
	produce(t, client(t, cl), "t", "after")
	if got := consume(t, cl, "t", 2); !slices.Equal(got, []string{"before", "after"}) {
		t.Fatalf("consumed %v", got)
	}
	conn, _ := zkSession(t, cl, 10e9)
	_, err := conn.Create("/kept", []byte("x"), 0, worldACL)
	must(t, err)
	must(t, cl.Restart(zkafkatest.ZooKeeperServer(1)))
	data, _, err := conn.Get("/kept") // the session reconnects to the restarted server
	must(t, err)
	if string(data) != "x" {
		t.Fatalf("/kept = %q", data)
	}
}

// TestBrokerConfigChecked: a bad server.properties value fails the start
// with the broker's own message; a key the harness owns is refused.
func TestBrokerConfigChecked(t *testing.T) {
	if _, err := zkafkatest.Start(zkafkatest.BrokerConfig("num.partitions", "zero")); err == nil || !strings.Contains(err.Error(), "num.partitions") {
		t.Fatalf("num.partitions=zero: %v", err)
	}
	if _, err := zkafkatest.Start(zkafkatest.BrokerConfig("broker.id", "7")); err == nil || !strings.Contains(err.Error(), "broker.id") {
		t.Fatalf("broker.id=7: %v", err)
	}
	cl := zkafkatest.StartCluster(t, zkafkatest.BrokerConfig("num.partitions", "4"))
	c := client(t, cl, kgoAllowAutoTopic())
	produce(t, c, "auto", "x")
	conn, _ := zkSession(t, cl, 10e9)
	parts, _, err := conn.Children("/brokers/topics/auto/partitions")
	must(t, err)
	if len(parts) != 4 {
		t.Fatalf("auto-created topic has %d partitions, want num.partitions=4", len(parts))
	}
}
