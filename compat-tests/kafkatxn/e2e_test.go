package kafkatxn

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestTransactionalProduce: kgo's transactional producer commits one
// transaction and aborts the next; a read_committed consumer reads the
// committed records only, a read_uncommitted one both.
func TestTransactionalProduce(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("brokers=%d", n), func(t *testing.T) {
			cl := kafkaenv.StartCluster(t, n, settings())
			admin := client(t, cl)
			createTopic(t, cl, admin, "tx", 3, int16(n))
			p := client(t, cl, kgo.TransactionalID("tp-1"), kgo.DefaultProduceTopic("tx"), kgo.TransactionTimeout(20*time.Second),
				kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
			for round, commit := range []bool{true, false} {
				ctx := ctxT(t)
				if err := p.BeginTransaction(); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 9; i++ {
					r := kgo.StringRecord(fmt.Sprintf("r%d-%d", round, i))
					if err := p.ProduceSync(ctx, r).FirstErr(); err != nil {
						t.Fatalf("produce in transaction %d: %v", round, err)
					}
				}
				if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
					t.Fatalf("EndTransaction(commit=%v): %v", commit, err)
				}
			}
			// A last committed transaction, so the read_committed
			// consumer knows where the aborted one ended.
			if err := p.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				if err := p.ProduceSync(ctxT(t), kgo.StringRecord(fmt.Sprintf("r2-%d", i))).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.EndTransaction(ctxT(t), kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
			got := consumeAll(t, cl, 12, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			for v := range got {
				if v[:2] == "r1" {
					t.Errorf("read_committed read %s of the aborted transaction", v)
				}
			}
			if len(got) != 12 {
				t.Errorf("read_committed read %d distinct records, want 12: %v", len(got), got)
			}
			if all := consumeAll(t, cl, 21, kgo.FetchIsolationLevel(kgo.ReadUncommitted())); len(all) != 21 {
				t.Errorf("read_uncommitted read %d distinct records, want 21", len(all))
			}
		})
	}
}

// consumeAll reads topic tx from the start until want distinct values
// came (or 20 s passed) and returns each value's count.
func consumeAll(t *testing.T, cl *kafkaenv.Cluster, want int, opts ...kgo.Opt) map[string]int {
	t.Helper()
	c := client(t, cl, append([]kgo.Opt{kgo.ConsumeTopics("tx"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	got := map[string]int{}
	ctx, cancel := context.WithTimeout(ctxT(t), 20*time.Second)
	defer cancel()
	for len(got) < want && ctx.Err() == nil {
		fs := c.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { got[string(r.Value)]++ })
	}
	// A little more, to see records that should not be there.
	ctx2, cancel2 := context.WithTimeout(ctxT(t), 500*time.Millisecond)
	defer cancel2()
	c.PollFetches(ctx2).EachRecord(func(r *kgo.Record) { got[string(r.Value)]++ })
	return got
}
