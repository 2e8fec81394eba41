// Command txnbench measures transactions with franz-go against an
// in-process ZooKeeper (quorum) and broker on 127.0.0.1 port 0:
//
//   - produce throughput of 1 KiB records, idempotent (no transaction)
//     and transactional with 100 and with 1000 records per transaction,
//     one producer, in the same run;
//   - the cost of a commit: EndTxn's round trip (answered once
//     PrepareCommit is in the log) and the time from EndTxn sent until
//     DescribeTransactions shows CompleteCommit (every marker written),
//     p50/p99 over transactions of 10 records.
//
// Used by scripts/bench.d/65-transactions.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/quorum"
)

func main() {
	dur := flag.Duration("d", 5*time.Second, "duration of each throughput run")
	commits := flag.Int("commits", 200, "transactions to time")
	flag.Parse()
	if err := run(*dur, *commits); err != nil {
		fmt.Fprintln(os.Stderr, "txnbench:", err)
		os.Exit(1)
	}
}

func run(dur time.Duration, commits int) error {
	dir, err := os.MkdirTemp("", "txnbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	qcfg := quorum.DefaultConfig(dir + "/zk")
	qcfg.ClientPort, qcfg.ClientPortAddress, qcfg.MaxClientCnxns = 0, "127.0.0.1", 0
	zl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	zk, err := quorum.StartWithListener(qcfg, log, zl)
	if err != nil {
		return err
	}
	defer zk.Close()
	cfg := broker.DefaultConfig(dir + "/kafka")
	cfg.Listeners = []string{"PLAINTEXT://127.0.0.1:0"}
	cfg.ZooKeeperConnect = zl.Addr().String()
	cfg.Txn.StateLogPartitions = 5
	b, err := broker.New(cfg, log)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go b.Serve(l)
	defer b.Shutdown(context.Background())
	seed := l.Addr().String()
	admin, err := kgo.NewClient(kgo.SeedBrokers(seed))
	if err != nil {
		return err
	}
	defer admin.Close()
	ctx := context.Background()
	if _, err := kadm.NewClient(admin).CreateTopic(ctx, 3, 1, nil, "bench"); err != nil {
		return err
	}
	value := make([]byte, 1024)
	fmt.Printf("%-34s %12s %10s\n", "produce, 1 KiB records", "records/s", "MiB/s")
	for _, per := range []int{0, 100, 1000} {
		n, elapsed, err := throughput(seed, per, dur, value)
		if err != nil {
			return err
		}
		name := "idempotent, no transaction"
		if per > 0 {
			name = fmt.Sprintf("transactional, %d per transaction", per)
		}
		rate := float64(n) / elapsed.Seconds()
		fmt.Printf("%-34s %12.0f %10.1f\n", name, rate, rate*1024/(1<<20))
	}
	ends, completes, err := commitCost(seed, commits, value)
	if err != nil {
		return err
	}
	fmt.Printf("\ncommit of 10 records, %d transactions:  p50      p99\n", commits)
	fmt.Printf("  EndTxn answered (PrepareCommit)     %-8v %v\n", pct(ends, 50), pct(ends, 99))
	fmt.Printf("  markers written (CompleteCommit)    %-8v %v\n", pct(completes, 50), pct(completes, 99))
	return nil
}

// throughput produces value records for dur: per records per committed
// transaction, or without transactions when per is 0.
func throughput(seed string, per int, dur time.Duration, value []byte) (int, time.Duration, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(seed), kgo.DefaultProduceTopic("bench"), kgo.ProducerLinger(0)}
	if per > 0 {
		opts = append(opts, kgo.TransactionalID(fmt.Sprintf("bench-%d", per)))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	ctx := context.Background()
	batch := per
	if batch == 0 {
		batch = 1000
	}
	n := 0
	start := time.Now()
	for time.Since(start) < dur {
		if per > 0 {
			if err := cl.BeginTransaction(); err != nil {
				return 0, 0, err
			}
		}
		for i := 0; i < batch; i++ {
			cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					fmt.Fprintln(os.Stderr, "produce:", err)
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			return 0, 0, err
		}
		if per > 0 {
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				return 0, 0, err
			}
		}
		n += batch
	}
	return n, time.Since(start), nil
}

// commitCost times EndTxn and the completion of commits of 10 records.
func commitCost(seed string, commits int, value []byte) (ends, completes []time.Duration, err error) {
	const id = "bench-commit"
	cl, err := kgo.NewClient(kgo.SeedBrokers(seed), kgo.DefaultProduceTopic("bench"), kgo.TransactionalID(id), kgo.ProducerLinger(0))
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	ctx := context.Background()
	for c := 0; c < commits; c++ {
		if err := cl.BeginTransaction(); err != nil {
			return nil, nil, err
		}
		for i := 0; i < 10; i++ {
			cl.Produce(ctx, &kgo.Record{Value: value}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			return nil, nil, err
		}
		t0 := time.Now()
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return nil, nil, err
		}
		ends = append(ends, time.Since(t0))
		for {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = []string{id}
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return nil, nil, err
			}
			if resp.TransactionStates[0].State == "CompleteCommit" {
				break
			}
		}
		completes = append(completes, time.Since(t0))
	}
	return ends, completes, nil
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(10 * time.Microsecond)
}
