package kafkatxn

import (
	"context"
	"fmt"
	"sync"
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

// TestConcurrentTransactions: eight transactional producers commit or
// abort transactions at the same time over the partitions of three
// brokers (their markers share WriteTxnMarkers requests per leader);
// read_committed readers get exactly the committed records, once each.
func TestConcurrentTransactions(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, settings())
	admin := client(t, cl)
	createTopic(t, cl, admin, "tx", 6, 2)
	const producers, rounds, per = 8, 6, 6
	want := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for i := 0; i < producers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			p, err := kgo.NewClient(kgo.SeedBrokers(cl.Seeds()...), kgo.TransactionalID(fmt.Sprintf("conc-%d", i)),
				kgo.DefaultProduceTopic("tx"), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.TransactionTimeout(30*time.Second))
			if err != nil {
				errs <- err
				return
			}
			defer p.Close()
			for r := 0; r < rounds; r++ {
				if err := p.BeginTransaction(); err != nil {
					errs <- err
					return
				}
				var vals []string
				for k := 0; k < per; k++ {
					v := fmt.Sprintf("p%d-r%d-%d", i, r, k)
					vals = append(vals, v)
					if err := p.ProduceSync(ctxT(t), kgo.StringRecord(v)).FirstErr(); err != nil {
						errs <- fmt.Errorf("producer %d round %d: %w", i, r, err)
						return
					}
				}
				commit := (i+r)%3 != 0
				if err := p.EndTransaction(ctxT(t), kgo.TransactionEndTry(commit)); err != nil {
					errs <- fmt.Errorf("producer %d round %d EndTransaction: %w", i, r, err)
					return
				}
				if commit {
					mu.Lock()
					for _, v := range vals {
						want[v] = true
					}
					mu.Unlock()
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := consumeAll(t, cl, len(want), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	for v, n := range got {
		if !want[v] {
			t.Errorf("read %s, which was aborted", v)
		} else if n != 1 {
			t.Errorf("read %s %d times", v, n)
		}
	}
	if len(got) < len(want) {
		t.Errorf("read %d committed records, want %d", len(got), len(want))
	}
}
