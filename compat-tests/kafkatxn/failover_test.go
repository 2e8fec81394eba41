package kafkatxn

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestCoordinatorFailoverCompletesCommit: a transaction over two
// partitions, one led by broker X, the other by Y, with its coordinator
// on the third broker C. X stops after the records are written, so its
// marker cannot be written and the transaction stays PrepareCommit; then
// C stops. The next leader of the id's __transaction_state partition
// loads the transaction from its log in PrepareCommit, and once X is back
// writes the missing marker and CompleteCommit: read_committed readers
// get every record of both partitions.
func TestCoordinatorFailoverCompletesCommit(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, settings(), kafkaenv.Configure(func(c *broker.Config) {
		c.Txn.StateLogMinISR = 1
		c.ZooKeeperSessionTimeout = 4 * time.Second
	}))
	kc := client(t, cl)
	const id = "failover-1"
	coord := txnCoordinator(t, kc, id)
	others := brokersBut(coord)
	x, y := others[0], others[1]
	notCoord := api{t: t, kc: kc, id: x}.init(id, 30000, -1, -1)
	if notCoord.ErrorCode != kerr.NotCoordinator.Code {
		t.Errorf("InitProducerId on broker %d, not the coordinator: %v", x, kerr.ErrorForCode(notCoord.ErrorCode))
	}
	createAssigned(t, cl, kc, "on-x", x)
	createAssigned(t, cl, kc, "on-y", y)

	p := client(t, cl, kgo.TransactionalID(id), kgo.TransactionTimeout(60*time.Second), kgo.RetryTimeout(60*time.Second))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		for _, topic := range []string{"on-x", "on-y"} {
			if err := p.ProduceSync(ctxT(t), &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s-%d", topic, i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cl.Broker(x).Stop()
	if err := p.EndTransaction(ctxT(t), kgo.TryCommit); err != nil {
		t.Fatalf("EndTransaction: %v", err)
	}
	a := api{t: t, kc: kc, id: coord}
	if d := a.describe(id); d.State != "PrepareCommit" {
		t.Fatalf("with X down the transaction is %s, want PrepareCommit", d.State)
	}
	cl.Broker(coord).Stop()
	kc2 := client(t, cl) // of the brokers still running
	var next int32
	waitFor(t, 30*time.Second, "a coordinator other than the stopped one", func() bool {
		next = txnCoordinator(t, kc2, id)
		return next != coord
	})
	if next != y {
		t.Fatalf("the next coordinator is %d, want %d (stopped: %d, %d)", next, y, coord, x)
	}
	b := api{t: t, kc: kc2, id: next}
	waitFor(t, 30*time.Second, "the new coordinator to load the transaction", func() bool {
		return b.describe(id).State == "PrepareCommit"
	})
	cl.Broker(x).Start()
	waitFor(t, 60*time.Second, "CompleteCommit at the new coordinator", func() bool {
		return b.describe(id).State == "CompleteCommit"
	})
	c := client(t, cl, kgo.ConsumeTopics("on-x", "on-y"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	ctx, cancel := context.WithTimeout(ctxT(t), 30*time.Second)
	defer cancel()
	for len(got) < 10 && ctx.Err() == nil {
		c.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	slices.Sort(got)
	if len(got) != 10 {
		t.Errorf("read_committed read %v, want the 10 records of the transaction", got)
	}
}
