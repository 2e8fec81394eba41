package kafkatxn

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/zkafkatest"
)

// TestMarkersOfAnEpochGoneStop: the coordinator C of a transaction in
// PrepareCommit stays the leader of its __transaction_state partition
// while the partition's leader epoch moves on (a follower F stops and
// leaves the ISR), with the COMMIT marker for the data partition (led by
// L) still in flight. C loads the partition again in the new epoch and
// sends the markers again; the sender of the old epoch, once its marker
// is answered, must not complete the transaction: if it did, the
// producer's next transaction would write to L's partition before the
// new epoch's COMMIT marker, which would then commit it there though the
// producer aborts it (the aborted-read anomaly of
// compat-tests/kafkatxnfaults). The markers at L are held by
// interception: the old epoch's until C has reloaded, the new one's for
// 3 s, in which the next transaction must not write its record.
func TestMarkersOfAnEpochGoneStop(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, settings(), kafkaenv.VerboseLogs())
	kc := client(t, cl)
	const id = "stale-markers"
	p := client(t, cl, kgo.TransactionalID(id), kgo.TransactionTimeout(60*time.Second),
		kgo.RetryTimeout(60*time.Second), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if _, _, err := p.ProducerID(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	coord := txnCoordinator(t, kc, id)
	others := brokersBut(coord)
	leader, follower := others[0], others[1]
	createAssigned(t, cl, kc, "gate", leader, coord) // F holds no replica of it

	var releaseOld, releaseNew sync.Once
	oldHeld, oldGo, newGo := make(chan struct{}), make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { releaseOld.Do(func() { close(oldGo) }); releaseNew.Do(func() { close(newGo) }) })
	zc := cl.Broker(leader).Cluster()
	markers := []int16{kmsg.WriteTxnMarkers.Int16()}
	zc.InterceptKafka(zkafkatest.KafkaRule{Keys: markers, Brokers: []int32{leader}, Count: 1,
		Respond: func(kmsg.Request) kmsg.Response { close(oldHeld); <-oldGo; return nil }})
	zc.InterceptKafka(zkafkatest.KafkaRule{Keys: markers, Brokers: []int32{leader}, Count: 1,
		Respond: func(kmsg.Request) kmsg.Response { <-newGo; return nil }})

	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctxT(t), &kgo.Record{Topic: "gate", Value: []byte("committed")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := p.EndTransaction(ctxT(t), kgo.TryCommit); err != nil {
		t.Fatalf("EndTransaction(commit): %v", err)
	}
	select {
	case <-oldHeld:
	case <-time.After(30 * time.Second):
		t.Fatal("no WriteTxnMarkers reached the data partition's leader")
	}
	cl.Broker(follower).Stop()
	waitFor(t, 60*time.Second, "the coordinator to load its partition again in a new epoch", func() bool {
		return slices.ContainsFunc(cl.Broker(coord).Logs.All(), func(r string) bool {
			return strings.Contains(r, "transaction coordinator loaded") && strings.Contains(r, "to_complete=1")
		})
	})
	releaseOld.Do(func() { close(oldGo) })

	// The next transaction: its record must come after the new epoch's
	// COMMIT marker, so the transaction waits (CONCURRENT_TRANSACTIONS)
	// until that marker is written.
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	acked := make(chan error, 1)
	p.Produce(ctxT(t), &kgo.Record{Topic: "gate", Value: []byte("aborted")}, func(_ *kgo.Record, err error) { acked <- err })
	select {
	case err := <-acked:
		t.Error("the next transaction wrote its record while the one before it had a marker still to write")
		acked <- err
	case <-time.After(3 * time.Second):
	}
	releaseNew.Do(func() { close(newGo) })
	if err := <-acked; err != nil {
		t.Fatalf("producing in the next transaction: %v", err)
	}
	if err := p.EndTransaction(ctxT(t), kgo.TryAbort); err != nil {
		t.Fatalf("EndTransaction(abort): %v", err)
	}
	if got := readCommitted(t, cl, "gate"); !slices.Equal(got, []string{"committed"}) {
		t.Errorf("read_committed read %q, want only the committed transaction's record", got)
	}
}

// readCommitted is what a read_committed consumer reads of topic from the
// start in 5 s.
func readCommitted(t *testing.T, cl *kafkaenv.Cluster, topic string) []string {
	t.Helper()
	c := client(t, cl, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	ctx, cancel := context.WithTimeout(ctxT(t), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		c.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}
