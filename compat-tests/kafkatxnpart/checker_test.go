package kafkatxnpart

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/compat-tests/internal/ktxn"
)

// outcome is what a producer was told of one transaction.
type outcome int8

const (
	committed outcome = iota
	aborted
	unknown // an error ended it: either is allowed, all or nothing
)

// checkedTxn is one transaction of the checker: its records
// ("p{producer}-t{txn}-r{record}") and outcome.
type checkedTxn struct {
	name    string
	records []string
	outcome outcome
}

// TestTransactionChecker, in the spirit of Jepsen's: four transactional
// producers (kgo) write transactions over the three partitions of an RF 3
// topic on three brokers and commit or abort at random, while a leader of
// the topic and the coordinator of one producer are stopped and started
// again (controlled shutdowns; kafkacrash does kill -9 of a partition
// leader). read_committed consumers then read every partition to its end:
// no aborted record is read, no committed transaction is read partially
// or twice, every committed record is read exactly once, and a
// transaction whose end the producer did not learn is read whole or not
// at all.
func TestTransactionChecker(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, kafkaenv.Configure(func(c *broker.Config) {
		c.Txn.StateLogPartitions = 3
		c.Replication.LagTimeMax = 2 * time.Second
		c.Replication.FetchBackoff = 50 * time.Millisecond
	}))
	adm := cl.Broker(1).Admin()
	defer adm.Close()
	if resp, err := adm.CreateTopic(ctxT(t), 3, 3, nil, "chk"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	for p := int32(0); p < 3; p++ {
		waitLeaderOf(t, cl, "chk", p)
	}
	const producers, txns = 4, 12
	var seedsMu sync.Mutex
	seeds := cl.Seeds()
	currentSeeds := func() []string {
		seedsMu.Lock()
		defer seedsMu.Unlock()
		return seeds
	}
	restarted := func() {
		s := runningSeeds(cl)
		seedsMu.Lock()
		seeds = s
		seedsMu.Unlock()
	}
	var (
		mu   sync.Mutex
		all  []*checkedTxn
		done = make(chan struct{})
		wg   sync.WaitGroup
		made = make(chan struct{}, producers*txns)
	)
	for i := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			id := fmt.Sprintf("chk-%d", i)
			for j := range txns {
				tx := &checkedTxn{name: fmt.Sprintf("p%d-t%d", i, j)}
				for k := range 1 + rng.IntN(6) {
					tx.records = append(tx.records, fmt.Sprintf("%s-r%d", tx.name, k))
				}
				tx.outcome = runTxn(id, currentSeeds(), tx, rng.IntN(3) != 0, rng)
				mu.Lock()
				all = append(all, tx)
				mu.Unlock()
				made <- struct{}{}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	waitTxns := func(n int) {
		for range n {
			select {
			case <-made:
			case <-done:
				return
			}
		}
	}
	// Faults: a leader of chk, then the coordinator of chk-0.
	waitTxns(8)
	leader := waitLeaderOf(t, cl, "chk", 0)
	cl.Broker(leader).Stop()
	restarted()
	waitTxns(6)
	cl.Broker(leader).Start()
	restarted()
	waitTxns(6)
	kc := cl.Broker(leader).Client()
	coord := findTxnCoordinator(t, kc, "chk-0")
	kc.Close()
	cl.Broker(coord).Stop()
	restarted()
	waitTxns(6)
	cl.Broker(coord).Start()
	restarted()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("the producers did not finish in 3 minutes")
	}

	// Every transaction has ended: the LSO of each partition reaches its end.
	for p := int32(0); p < 3; p++ {
		l := waitLeaderOf(t, cl, "chk", p)
		c := direct(t, cl.Broker(l).Addr)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			lso, err1 := ktxn.Latest(c, "chk", p, 1)
			end, err2 := ktxn.Latest(c, "chk", p, 0)
			if err1 == nil && err2 == nil && lso == end {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("chk-%d: LSO %d, end %d (%v %v): a transaction stays open", p, lso, end, err1, err2)
			}
		}
	}
	read := readCommittedAll(t, cl.Seeds())

	counts := map[string]int{}
	for _, v := range read {
		counts[v]++
	}
	var stats [3]int
	anomalies := 0
	known := map[string]bool{}
	for _, tx := range all {
		stats[tx.outcome]++
		seen := 0
		for _, r := range tx.records {
			known[r] = true
			if counts[r] > 1 {
				t.Errorf("%s read %d times", r, counts[r])
				anomalies++
			}
			if counts[r] > 0 {
				seen++
			}
		}
		switch {
		case tx.outcome == committed && seen != len(tx.records):
			t.Errorf("committed %s: %d of its %d records read", tx.name, seen, len(tx.records))
			anomalies++
		case tx.outcome == aborted && seen != 0:
			t.Errorf("aborted %s: %d of its records read", tx.name, seen)
			anomalies++
		case tx.outcome == unknown && seen != 0 && seen != len(tx.records):
			t.Errorf("%s (outcome unknown): read partially, %d of %d", tx.name, seen, len(tx.records))
			anomalies++
		}
	}
	for v := range counts {
		if !known[v] {
			t.Errorf("read %q, which no transaction wrote", v)
			anomalies++
		}
	}
	t.Logf("transactions committed %d, aborted %d, unknown outcome %d; records read %d; anomalies %d",
		stats[committed], stats[aborted], stats[unknown], len(read), anomalies)
}

// runTxn runs tx as transactional id id (a new client each time, so that
// a failed one leaves nothing behind: the next InitProducerId aborts what
// it left open) and returns what the producer learned.
func runTxn(id string, seeds []string, tx *checkedTxn, commit bool, rng *rand.Rand) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	p, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionTimeout(20*time.Second), kgo.RetryTimeout(30*time.Second), kgo.RecordDeliveryTimeout(30*time.Second))
	if err != nil {
		return aborted // nothing was written
	}
	defer p.Close()
	if err := p.BeginTransaction(); err != nil {
		return aborted
	}
	failed := false
	for _, r := range tx.records {
		rec := &kgo.Record{Topic: "chk", Partition: int32(rng.IntN(3)), Value: []byte(r)}
		if err := p.ProduceSync(ctx, rec).FirstErr(); err != nil {
			failed = true
			break
		}
	}
	if failed {
		commit = false
	}
	if err := p.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		return unknown
	}
	if commit {
		return committed
	}
	return aborted
}

// runningSeeds are the addresses of cl's running brokers. Only the test's
// goroutine may call it (Start changes an address).
func runningSeeds(cl *kafkaenv.Cluster) []string {
	var out []string
	for _, e := range cl.Brokers {
		if e.Broker() != nil {
			out = append(out, e.Addr)
		}
	}
	return out
}

// waitLeaderOf waits (30 s) until the brokers name a leader of topic's
// partition p that runs, and returns it.
func waitLeaderOf(t *testing.T, cl *kafkaenv.Cluster, topic string, p int32) int32 {
	t.Helper()
	kc, err := kgo.NewClient(kgo.SeedBrokers(runningSeeds(cl)...))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	adm := kadm.NewClient(kc)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctxT(t), topic)
		if err == nil {
			if pd, ok := td[topic].Partitions[p]; ok && pd.Leader > 0 && cl.Broker(pd.Leader).Broker() != nil {
				return pd.Leader
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no running leader of %s-%d: %v", topic, p, err)
		}
	}
}

// findTxnCoordinator is FindCoordinator key type 1 for id, retried (30 s).
func findTxnCoordinator(t *testing.T, kc *kgo.Client, id string) int32 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorType, fc.CoordinatorKey = 1, id
		r, err := fc.RequestWith(ctxT(t), kc)
		if err == nil && r.ErrorCode == 0 {
			return r.NodeID
		}
		if time.Now().After(deadline) {
			t.Fatalf("no coordinator for %s: %v %+v", id, err, r)
		}
	}
}

// readCommittedAll reads every partition of chk up to ends with a kgo
// read_committed consumer and returns the values read.
func readCommittedAll(t *testing.T, seeds []string) []string {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	for p := int32(0); p < 3; p++ {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	c, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"chk": offsets}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Every transaction has ended (the LSO is the end): the reader is
	// done once nothing more comes for 5 s (60 s at most).
	var out []string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		fs := c.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)); n++ })
		if n == 0 && ctx.Err() != nil {
			break
		}
	}
	return out
}
