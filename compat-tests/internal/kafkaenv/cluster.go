package kafkaenv

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/zkafkatest"
)

// Cluster is n brokers (ids 1..n) on one chroot, each with its own data
// directory, stopped at the end of the test.
type Cluster struct {
	Brokers []*Env // Brokers[i] has broker.id i+1
}

// StartCluster starts n brokers one after the other (so broker 1 becomes
// the controller); opts apply to each.
func StartCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	chroot := "/" + randName("cluster-")
	cl := &Cluster{}
	zc := zkafkatest.StartCluster(t, zkafkatest.ExternalZooKeeper(zkAddr), zkafkatest.Chroot(chroot),
		zkafkatest.Brokers(0), zkafkatest.Logger(slog.New(baseHandler())))
	for i := 1; i <= n; i++ {
		id := int32(i)
		o := append([]Option{func(o *options) { o.chroot, o.cluster = chroot, zc }}, opts...)
		o = append(o, Configure(func(c *broker.Config) { c.BrokerID = id }))
		cl.Brokers = append(cl.Brokers, Start(t, o...))
	}
	for _, e := range cl.Brokers {
		if !e.unreachable {
			e.WaitBrokers(n)
		}
	}
	return cl
}

// WaitBrokers waits (up to 20 s) until the broker's Metadata lists n
// brokers: the controller's UpdateMetadata follows its /brokers/ids watch.
func (e *Env) WaitBrokers(n int) {
	e.T.Helper()
	adm := kadm.NewClient(e.Client())
	defer adm.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		bs, err := adm.ListBrokers(ctx)
		cancel()
		if err == nil && len(bs) == n {
			return
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("broker at %s never saw %d brokers: %v %v", e.Addr, n, bs, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Broker returns the broker with broker.id id.
func (cl *Cluster) Broker(id int32) *Env { return cl.Brokers[id-1] }

// Seeds is every running broker's address, for kgo.SeedBrokers.
func (cl *Cluster) Seeds() []string {
	var out []string
	for _, e := range cl.Brokers {
		if e.running {
			out = append(out, e.Addr)
		}
	}
	return out
}

// String lists the brokers' addresses.
func (cl *Cluster) String() string { return strings.Join(cl.Seeds(), ",") }
