package zkafkatest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/zkafkatest"
)

// In a test, StartCluster(t, ...) does the same and closes the cluster
// with t.Cleanup; Start is the form without a *testing.T.
func ExampleStart() {
	cl, err := zkafkatest.Start(zkafkatest.Topic("events", 1, 1))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	c, _ := kgo.NewClient(kgo.SeedBrokers(cl.Seeds()...), kgo.ConsumeTopics("events"))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("hello")}).FirstErr(); err != nil {
		panic(err)
	}
	fs := c.PollFetches(ctx)
	fmt.Println(string(fs.Records()[0].Value), "from broker", cl.BrokerIDs())
	// Output: hello from broker [1]
}

// A rule answers the first two produce requests with
// NOT_LEADER_OR_FOLLOWER; franz-go refreshes its metadata and retries.
func ExampleCluster_InterceptKafka() {
	cl, err := zkafkatest.Start(zkafkatest.Topic("events", 1, 1))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	hook := cl.InterceptKafka(zkafkatest.KafkaRule{
		Keys:      []int16{kmsg.Produce.Int16()},
		Count:     2,
		ErrorCode: kerr.NotLeaderForPartition.Code,
	})
	// A short metadata age: the retry waits for fresh metadata.
	c, _ := kgo.NewClient(kgo.SeedBrokers(cl.Seeds()...), kgo.MetadataMinAge(50*time.Millisecond))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte("x")}).FirstErr()
	fmt.Println("produced:", err == nil, "after", hook.Hits(), "injected errors")
	// Output: produced: true after 2 injected errors
}

// An expired session: its client is told on reconnecting, and its
// ephemerals are gone.
func ExampleCluster_ExpireSession() {
	cl, err := zkafkatest.Start(zkafkatest.Brokers(0))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	conn, events, _ := zk.Connect(cl.ZooKeeperServers(), 10*time.Second, zk.WithLogInfo(false))
	defer conn.Close()
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	conn.Create("/lock", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	cl.ExpireSession(conn.SessionID())
	for ev := range events {
		if ev.State == zk.StateExpired {
			fmt.Println("the client saw", ev.State)
			break
		}
	}
	// Output: the client saw StateExpired
}

// Kill a ZooKeeper server of an ensemble: the client moves to another
// and keeps its session.
func ExampleCluster_Kill() {
	cl, err := zkafkatest.Start(zkafkatest.Brokers(0), zkafkatest.Ensemble(3))
	if err != nil {
		panic(err)
	}
	defer cl.Close()
	conn, events, _ := zk.Connect(cl.ZooKeeperServers(), 10*time.Second, zk.WithLogInfo(false))
	defer conn.Close()
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	session := conn.SessionID()
	var server zkafkatest.Member // the one the client is connected to
	for id := int32(1); id <= 3; id++ {
		if addr, _ := cl.Addr(zkafkatest.ZooKeeperServer(id)); addr == conn.Server() {
			server = zkafkatest.ZooKeeperServer(id)
		}
	}
	cl.Kill(server)
	// As with Apache ZooKeeper, a request made while the client moves (or
	// while the ensemble elects a leader, if the killed server led) can
	// fail with a connection loss: retry it. go-zookeeper reports one as
	// ErrConnectionClosed or ErrNoServer, or, for a request it was writing
	// to the dying connection, as the socket's error (a net.Error).
	var netErr net.Error
	for try := 0; try < 200; try++ {
		_, err = conn.Create("/after-the-kill", nil, 0, zk.WorldACL(zk.PermAll))
		if try > 0 && err == zk.ErrNodeExists {
			err = nil // an earlier try's reply was lost
		}
		if err != zk.ErrConnectionClosed && err != zk.ErrNoServer && !errors.As(err, &netErr) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Println("written:", err == nil, "same session:", conn.SessionID() == session)
	// Output: written: true same session: true
}
