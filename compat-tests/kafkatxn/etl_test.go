package kafkatxn

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestGroupTransactSession: consume-transform-produce with kgo's
// GroupTransactSession. A first session aborts what it polled: nothing
// reaches "out" for read_committed readers and the group's offsets stay
// unset. A second one commits: every input record is in "out" exactly
// once and the group's committed offsets are the input's end offsets
// (they became visible with the commit marker on the group's partition
// of __consumer_offsets).
func TestGroupTransactSession(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("brokers=%d", n), func(t *testing.T) {
			cl := kafkaenv.StartCluster(t, n, settings())
			admin := client(t, cl, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			createTopic(t, cl, admin, "in", 2, int16(n))
			createTopic(t, cl, admin, "out", 2, int16(n))
			const total = 40
			for i := 0; i < total; i++ {
				r := &kgo.Record{Topic: "in", Partition: int32(i % 2), Value: []byte(fmt.Sprintf("v%02d", i))}
				if err := admin.ProduceSync(ctxT(t), r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			adm := kadm.NewClient(admin)
			session := func(id string, commit bool, want int) {
				s, err := kgo.NewGroupTransactSession(append([]kgo.Opt{kgo.SeedBrokers(cl.Seeds()...)},
					kgo.TransactionalID(id), kgo.ConsumerGroup("etl"), kgo.ConsumeTopics("in"),
					kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
					kgo.SessionTimeout(6*time.Second), kgo.TransactionTimeout(20*time.Second), kgo.RequireStableFetchOffsets())...)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ctx, cancel := context.WithTimeout(ctxT(t), 40*time.Second)
				defer cancel()
				seen := 0
				for seen < want && ctx.Err() == nil {
					fs := s.PollFetches(ctx)
					if err := s.Begin(); err != nil {
						t.Fatal(err)
					}
					fs.EachRecord(func(r *kgo.Record) {
						seen++
						s.Produce(ctx, &kgo.Record{Topic: "out", Value: append([]byte("out-"), r.Value...)}, nil)
					})
					committed, err := s.End(ctx, kgo.TransactionEndTry(commit))
					if err != nil {
						t.Fatalf("End(commit=%v): %v", commit, err)
					}
					if commit && !committed && seen > 0 {
						t.Logf("session %s: a transaction was aborted (rebalance)", id)
					}
				}
				if seen < want {
					t.Fatalf("session %s polled %d records, want %d", id, seen, want)
				}
			}
			session("etl-abort", false, total)
			offs, err := adm.FetchOffsets(ctxT(t), "etl")
			if err != nil {
				t.Fatal(err)
			}
			offs.Each(func(o kadm.OffsetResponse) {
				if o.Err == nil && o.At >= 0 {
					t.Errorf("after aborted transactions the group has offset %d for %s-%d", o.At, o.Topic, o.Partition)
				}
			})
			session("etl-commit", true, total)
			got := map[string]int{}
			c := client(t, cl, kgo.ConsumeTopics("out"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			ctx, cancel := context.WithTimeout(ctxT(t), 20*time.Second)
			defer cancel()
			for len(got) < total && ctx.Err() == nil {
				c.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got[string(r.Value)]++ })
			}
			if len(got) != total {
				t.Errorf("read_committed read %d distinct records of out, want %d", len(got), total)
			}
			for v, k := range got {
				if k != 1 {
					t.Errorf("%s read %d times", v, k)
				}
			}
			ends, err := adm.ListEndOffsets(ctxT(t), "in")
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, 20*time.Second, "the committed offsets of etl at the end of in", func() bool {
				offs, err := adm.FetchOffsets(ctxT(t), "etl")
				if err != nil {
					return false
				}
				ok := true
				ends.Each(func(e kadm.ListedOffset) {
					o, found := offs.Lookup("in", e.Partition)
					ok = ok && (found && o.At == e.Offset || e.Offset == 0 && (!found || o.At < 0))
				})
				return ok
			})
		})
	}
}
