package kafkatxnfaults

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
	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
	"github.com/zkafka/zkafka/compat-tests/internal/ktxn"
)

func TestMain(m *testing.M) { kcluster.Main(m) }

const (
	topic     = "chk"
	parts     = 3
	producers = 4
	txns      = 10 // per producer and fault
)

// fault is one row: what is killed, found when the fault starts.
type fault struct {
	name   string
	victim func(t *testing.T, c *kcluster.Cluster) int32
}

var faults = []fault{
	{"leader-kill", func(t *testing.T, c *kcluster.Cluster) int32 { return c.Leader(topic, 0) }},
	{"coordinator-kill", func(t *testing.T, c *kcluster.Cluster) int32 { return coordinatorOf(t, c, "chk-f1-0") }},
}

// TestKillNineChecker runs the producers through each fault in turn: the
// victim is killed with SIGKILL once the producers are under way and
// restarted a few transactions later; then every transaction has ended
// (each partition's LSO reaches its end), a read_committed consumer reads
// the topic and the transactions are checked.
func TestKillNineChecker(t *testing.T) {
	c := kcluster.Start(t, kcluster.Options{Props: map[string]string{
		"transaction.state.log.num.partitions": "3",
		"transaction.state.log.min.isr":        "2",
	}})
	kc, err := kgo.NewClient(kgo.SeedBrokers(c.Seeds()...))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	resp, err := kadm.NewClient(kc).CreateTopic(ctx, parts, 3, nil, topic)
	cancel()
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	var all []*ktxn.Txn
	for fi, f := range faults {
		txs := runFault(t, c, fi, f)
		all = append(all, txs...)
	}
	waitStable(t, c)
	read, err := ktxn.ReadCommitted(c.Seeds(), topic, parts, 5*time.Second, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	stats, anomalies := ktxn.Check(all, read)
	for _, a := range anomalies {
		t.Error(a)
	}
	t.Logf("all faults: committed %d, aborted %d, unknown %d, records read %d, anomalies %d",
		stats[ktxn.Committed], stats[ktxn.Aborted], stats[ktxn.Unknown], len(read), len(anomalies))
}

// runFault runs producers × txns transactions with f's victim killed and
// restarted meanwhile, and logs its row of the table.
func runFault(t *testing.T, c *kcluster.Cluster, fi int, f fault) []*ktxn.Txn {
	t.Helper()
	var (
		mu   sync.Mutex
		out  []*ktxn.Txn
		wg   sync.WaitGroup
		made = make(chan struct{}, producers*txns)
	)
	seeds := c.Seeds()
	for i := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(fi*100+i), 11))
			id := fmt.Sprintf("chk-f%d-%d", fi, i)
			for j := range txns {
				tx := ktxn.NewTxn(fi*100+i, j, 1+rng.IntN(6))
				ktxn.RunTxn(seeds, id, topic, parts, tx, rng.IntN(3) != 0, rng)
				mu.Lock()
				out = append(out, tx)
				mu.Unlock()
				made <- struct{}{}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	wait := func(n int) {
		for range n {
			select {
			case <-made:
			case <-done:
				return
			}
		}
	}
	wait(6)
	victim := f.victim(t, c)
	c.Kill9(victim)
	wait(8)
	c.Restart(victim)
	select {
	case <-done:
	case <-time.After(4 * time.Minute):
		t.Fatalf("%s: the producers did not finish in 4 minutes", f.name)
	}
	stats, _ := ktxn.Check(out, nil) // outcomes only; the read is checked at the end
	t.Logf("%s (broker %d killed): committed %d, aborted %d, unknown %d",
		f.name, victim, stats[ktxn.Committed], stats[ktxn.Aborted], stats[ktxn.Unknown])
	return out
}

// coordinatorOf is FindCoordinator key type 1 for id (30 s of retries).
func coordinatorOf(t *testing.T, c *kcluster.Cluster, id string) int32 {
	t.Helper()
	kc, err := kgo.NewClient(kgo.SeedBrokers(c.Seeds()...))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorType, fc.CoordinatorKey = 1, id
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r, err := fc.RequestWith(ctx, kc)
		cancel()
		if err == nil && r.ErrorCode == 0 {
			return r.NodeID
		}
		if time.Now().After(deadline) {
			t.Fatalf("no coordinator for %s: %v", id, err)
		}
	}
}

// waitStable waits (90 s) until every partition's LSO is its end on its
// leader: no transaction stays open.
func waitStable(t *testing.T, c *kcluster.Cluster) {
	t.Helper()
	for p := int32(0); p < parts; p++ {
		var lso, end int64
		var err1, err2 error
		for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if l := c.Leader(topic, p); l > 0 {
				if cl, err := ktxn.Direct(c.Broker(l).Addr); err == nil {
					lso, err1 = ktxn.Latest(cl, topic, p, 1)
					end, err2 = ktxn.Latest(cl, topic, p, 0)
					cl.Close()
					if err1 == nil && err2 == nil && lso == end {
						break
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s-%d: LSO %d, end %d (%v %v): a transaction stays open", topic, p, lso, end, err1, err2)
			}
		}
	}
}
