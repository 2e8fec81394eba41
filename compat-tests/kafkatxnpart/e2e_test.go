package kafkatxnpart

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// transact runs one kgo transaction of values on topic and commits or
// aborts it.
func transact(t *testing.T, p *kgo.Client, topic string, commit bool, values ...string) {
	t.Helper()
	ctx := ctxT(t)
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := p.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
	if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// endToEnd: franz-go's transactional producer against the coordinator,
// read_committed consumers seeing the committed transactions only, and
// KIP-890: a batch of the producer's last transaction sent after it ended
// is refused with INVALID_TXN_STATE (the coordinator no longer has the
// partition in a transaction), and nothing is appended.
func endToEnd(t *testing.T, seeds []string, leaderAddr func() string) {
	ctx := ctxT(t)
	txnID := "e2e-" + fmt.Sprint(time.Now().UnixNano())
	p, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID(txnID),
		kgo.DefaultProduceTopic("e2e"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	transact(t, p, "e2e", true, "c1", "c2")
	transact(t, p, "e2e", false, "x1", "x2", "x3")
	transact(t, p, "e2e", true, "c3")
	want := []string{"c1", "c2", "c3"}
	if got := consumeCommitted(t, seeds, "e2e", len(want)); !slices.Equal(got, want) {
		t.Fatalf("read_committed consumer got %q, want %q", got, want)
	}
	pid, epoch, err := p.ProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cl := direct(t, leaderAddr())
	end := latest(t, cl, "e2e", 0, 0)
	// The next sequence: only the verification refuses it. While the
	// coordinator still writes the last commit's markers it answers
	// CONCURRENT_TRANSACTIONS, which a produce gets as the retriable
	// NOT_ENOUGH_REPLICAS (Kafka 3.7): retry then, as a producer does.
	var late kmsg.ProduceResponseTopicPartition
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		late = produceTxn(t, cl, txnID, "e2e", 0, txnBatch(pid, epoch, 6, "late"))
		if late.ErrorCode != kerr.NotEnoughReplicas.Code || time.Now().After(deadline) {
			break
		}
	}
	if late.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("a transactional batch after its transaction ended: %v (offset %d), want INVALID_TXN_STATE", kerr.ErrorForCode(late.ErrorCode), late.BaseOffset)
	}
	if got := latest(t, cl, "e2e", 0, 0); got != end {
		t.Fatalf("log end moved from %d to %d after a refused batch", end, got)
	}
	if lso := latest(t, cl, "e2e", 0, 1); lso != end {
		t.Fatalf("LSO %d, want the log end %d: no transaction may stay open", lso, end)
	}
}

func TestEndToEndSingleBroker(t *testing.T) {
	e := kafkaenv.Start(t)
	if _, err := e.Admin().CreateTopic(ctxT(t), 1, 1, nil, "e2e"); err != nil {
		t.Fatal(err)
	}
	endToEnd(t, []string{e.Addr}, func() string { return e.Addr })
}

func TestEndToEndThreeBrokers(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3)
	adm := cl.Broker(1).Admin()
	if resp, err := adm.CreateTopic(context.Background(), 1, 3, nil, "e2e"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	leader := leaderOf(t, adm, "e2e", -1, 3)
	waitLed(t, cl.Broker(leader), "e2e")
	endToEnd(t, cl.Seeds(), func() string { return cl.Broker(leader).Addr })
}
