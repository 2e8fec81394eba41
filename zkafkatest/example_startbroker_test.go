package zkafkatest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/zkafkatest"
)

// Two clusters share one ZooKeeper, each under its chroot (ExternalZooKeeper
// could as well name an Apache ZooKeeper); the second starts a broker of
// its own configuration, with two client listeners, each served behind a
// link the cluster advertises.
func ExampleCluster_StartBroker() {
	zk, err := zkafkatest.Start(zkafkatest.Brokers(0))
	if err != nil {
		panic(err)
	}
	defer zk.Close()
	a, err := zkafkatest.Start(zkafkatest.ExternalZooKeeper(zk.ZooKeeper()), zkafkatest.Chroot("/a"))
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := zkafkatest.Start(zkafkatest.ExternalZooKeeper(zk.ZooKeeper()), zkafkatest.Chroot("/b"), zkafkatest.Brokers(0))
	if err != nil {
		panic(err)
	}
	defer b.Close()
	cfg := broker.DefaultConfig("")
	cfg.LogDirs, cfg.ZooKeeperConnect = nil, "" // the cluster's
	cfg.BrokerID = 7
	cfg.Listeners = []string{"PLAINTEXT://127.0.0.1:0", "OTHER://127.0.0.1:0"}
	cfg.ListenerProtocols = map[string]string{"PLAINTEXT": "PLAINTEXT", "OTHER": "PLAINTEXT"}
	if err := b.StartBroker(cfg, nil); err != nil {
		panic(err)
	}
	other := b.ListenerAddrs(7)[1]
	c, _ := kgo.NewClient(kgo.SeedBrokers(other), kgo.AllowAutoTopicCreation())
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = c.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("x")}).FirstErr()
	fmt.Println("produced through OTHER:", err == nil, "; clusters", a.BrokerIDs(), b.BrokerIDs(), "under", a.Chroot(), b.Chroot())
	// Output: produced through OTHER: true ; clusters [1] [7] under /a /b
}
