package kafkatxnfaults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
	"github.com/zkafka/zkafka/internal/javahash"
)

func TestMain(m *testing.M) { kcluster.Main(m) }

const producers = 4

// fault is one phase of the run: cycle kills one broker the phase names
// and restarts it.
type fault struct {
	name   string
	victim func(c *kcluster.Cluster) int32
}

var faults = []fault{
	{"txn-coordinator", func(c *kcluster.Cluster) int32 {
		return c.Leader("__transaction_state", partitionOf(txnID(rand.IntN(producers)), internalParts))
	}},
	{"partition-leader", func(c *kcluster.Cluster) int32 { return c.Leader(dataTopic, rand.Int32N(dataParts)) }},
	{"group-coordinator", func(c *kcluster.Cluster) int32 {
		return c.Leader("__consumer_offsets", partitionOf(groupID(rand.IntN(producers)), internalParts))
	}},
}

// internalParts is both internal topics' partition count in this test.
const internalParts = 10

// partitionOf is Kafka's abs(String.hashCode(key)) % n.
func partitionOf(key string, n int) int32 {
	h := javahash.String(key)
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % int32(n)
}

// cycles is ZKAFKA_TXN_CYCLES, kills per fault, default 3.
func cycles(t *testing.T) int {
	if s := os.Getenv("ZKAFKA_TXN_CYCLES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("ZKAFKA_TXN_CYCLES=%q: want a positive count", s)
		}
		return n
	}
	return 3
}

// TestTransactionChecker: transactional producers writing to several
// partitions and committing or aborting at random while brokers are
// killed with SIGKILL, a read_committed consumer reading throughout, and
// Check over what every side observed; it prints the table and fails on
// any anomaly.
func TestTransactionChecker(t *testing.T) {
	c := kcluster.Start(t, kcluster.Options{Props: map[string]string{
		"transaction.state.log.num.partitions": strconv.Itoa(internalParts),
		"offsets.topic.num.partitions":         strconv.Itoa(internalParts),
	}})
	c.CreateTopic(dataTopic, dataParts, 3, nil)
	c.CreateTopic(offsetTopic, 1, 3, nil)
	var label phaseLabel
	label.set("none")
	live, stopLive := startReader(c)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	ps := make([]*producer, producers)
	for i := range ps {
		ps[i] = &producer{n: i, seeds: c.Seeds(), phase: &label}
		wg.Add(1)
		go func() { defer wg.Done(); ps[i].run(stop) }()
	}
	stopProducers := sync.OnceFunc(func() { close(stop); wg.Wait() })
	t.Cleanup(stopProducers)
	time.Sleep(8 * time.Second)
	n := cycles(t)
	for _, f := range faults {
		label.set(f.name)
		for range n {
			killAndRestart(t, c, f)
		}
	}
	label.set("after")
	time.Sleep(2 * time.Second)
	stopProducers()
	waitSettled(t, c)
	final := readAll(t, c, committedRecords(ps))
	stopLive()
	h := History{Live: live.snapshot(), Final: final, GroupOffsets: groupOffsets(t, c)}
	var errs []string
	for _, p := range ps {
		h.Txns = append(h.Txns, p.txns...)
		errs = append(errs, p.errs...)
	}
	rep := Check(h)
	for _, row := range rep.Rows {
		fmt.Println("txn-check", row)
	}
	if len(errs) > 0 {
		t.Logf("producer errors (%d, first 5): %s", len(errs), strings.Join(errs[:min(5, len(errs))], "; "))
	}
	if !rep.OK() {
		t.Fatalf("anomalies:\n%s", strings.Join(rep.Problems, "\n"))
	}
	if committed := countOutcome(h.Txns, Committed); committed < 20 {
		t.Fatalf("only %d transactions committed: the workload did not run", committed)
	}
}

func killAndRestart(t *testing.T, c *kcluster.Cluster, f fault) {
	t.Helper()
	victim := f.victim(c)
	if victim < 0 {
		t.Fatalf("%s: no leader to kill", f.name)
	}
	c.Kill9(victim)
	c.WaitFor(fmt.Sprintf("broker %d's registration to expire", victim), 45*time.Second, func() bool {
		for _, id := range c.Registered() {
			if id == victim {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second) // writes go on without it
	c.Restart(victim)
	c.WaitFor(fmt.Sprintf("broker %d back in every ISR of %s", victim, dataTopic), 45*time.Second, func() bool {
		for p := range dataParts {
			s, err := c.State(dataTopic, p)
			if err != nil || len(s.ISR) < 3 {
				return false
			}
		}
		return true
	})
}

// waitSettled waits until no transaction is open: every partition's last
// stable offset has reached its high watermark.
func waitSettled(t *testing.T, c *kcluster.Cluster) {
	t.Helper()
	adm := kadm.NewClient(c.Client())
	c.WaitFor("every transaction of "+dataTopic+" ended (LSO = HW)", 60*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hw, err1 := adm.ListEndOffsets(ctx, dataTopic)
		lso, err2 := adm.ListCommittedOffsets(ctx, dataTopic)
		if err1 != nil || err2 != nil || hw.Error() != nil || lso.Error() != nil {
			return false
		}
		settled := true
		hw.Each(func(o kadm.ListedOffset) {
			if l, ok := lso.Lookup(o.Topic, o.Partition); !ok || l.Offset != o.Offset {
				settled = false
			}
		})
		return settled
	})
}

// readAll reads dataTopic with read_committed from the start: until at
// least want records came (bounded), then until 3 s pass with none.
func readAll(t *testing.T, c *kcluster.Cluster, want int) []Rec {
	t.Helper()
	r, stop := startReader(c)
	defer stop()
	kcluster.Poll(60*time.Second, func() bool { return r.total.Load() >= int64(want) })
	for last := r.total.Load(); ; {
		time.Sleep(3 * time.Second)
		if now := r.total.Load(); now == last {
			break
		} else {
			last = now
		}
	}
	return r.snapshot()
}

func committedRecords(ps []*producer) int {
	n := 0
	for _, p := range ps {
		for _, t := range p.txns {
			if t.Outcome == Committed {
				n += t.Records
			}
		}
	}
	return n
}

func countOutcome(txns []Txn, o Outcome) int {
	n := 0
	for _, t := range txns {
		if t.Outcome == o {
			n++
		}
	}
	return n
}

// groupOffsets is each producer group's committed offset of src/0.
func groupOffsets(t *testing.T, c *kcluster.Cluster) map[int]int64 {
	t.Helper()
	adm := kadm.NewClient(c.Client())
	out := map[int]int64{}
	for p := range producers {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		offs, err := adm.FetchOffsets(ctx, groupID(p))
		cancel()
		if err != nil {
			t.Fatalf("OffsetFetch %s: %v", groupID(p), err)
		}
		if o, ok := offs.Lookup(offsetTopic, 0); ok && o.Err == nil && o.At >= 0 {
			out[p] = o.At
		}
	}
	return out
}
