package kafkatxnpart

import (
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
		all  []*ktxn.Txn
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
				tx := ktxn.NewTxn(i, j, 1+rng.IntN(6))
				ktxn.RunTxn(currentSeeds(), id, "chk", 3, tx, rng.IntN(3) != 0, rng)
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
	read, err := ktxn.ReadCommitted(runningSeeds(cl), "chk", 3, 5*time.Second, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	stats, anomalies := ktxn.Check(all, read)
	for _, a := range anomalies {
		t.Error(a)
	}
	t.Logf("transactions committed %d, aborted %d, unknown outcome %d; records read %d; anomalies %d",
		stats[ktxn.Committed], stats[ktxn.Aborted], stats[ktxn.Unknown], len(read), len(anomalies))
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
