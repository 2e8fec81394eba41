package kafkacoord

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// ledger is what the members of the group saw: each member's assignment
// per generation (from OnPartitionsAssigned), each delivery with the
// highest offset committed for its partition when it was read, and the
// commits that succeeded.
type ledger struct {
	mu        sync.Mutex
	owners    map[int32]map[int32][]string // generation → partition → members
	assigned  []assignment
	committed map[int32]int64 // partition → highest committed offset
	seen      map[string]int  // value → deliveries
	below     []string        // deliveries below a committed offset
}

type assignment struct {
	member     string
	generation int32
}

func newLedger() *ledger {
	return &ledger{owners: map[int32]map[int32][]string{}, committed: map[int32]int64{}, seen: map[string]int{}}
}

func (l *ledger) assign(member string, gen int32, parts []int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owners[gen] == nil {
		l.owners[gen] = map[int32][]string{}
	}
	for _, p := range parts {
		l.owners[gen][p] = append(l.owners[gen][p], member)
	}
	l.assigned = append(l.assigned, assignment{member, gen})
}

func (l *ledger) deliver(r *kgo.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.committed[r.Partition]; ok && r.Offset < c {
		l.below = append(l.below, fmt.Sprintf("%d@%d (committed %d)", r.Partition, r.Offset, c))
	}
	l.seen[string(r.Value)]++
}

func (l *ledger) commit(rs []*kgo.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range rs {
		if r.Offset+1 > l.committed[r.Partition] {
			l.committed[r.Partition] = r.Offset + 1
		}
	}
}

// member consumes in the group until ctx ends, committing what each poll
// returned.
func member(ctx context.Context, t *testing.T, cl *kafkaenv.Cluster, l *ledger, name string, wg *sync.WaitGroup) {
	var kc *kgo.Client
	kc = client(t, cl, kgo.ConsumerGroup("moving"), kgo.ConsumeTopics("moves"), kgo.DisableAutoCommit(),
		kgo.Balancers(kgo.RangeBalancer()), kgo.ClientID(name), kgo.BlockRebalanceOnPoll(),
		kgo.SessionTimeout(3*time.Second), kgo.HeartbeatInterval(300*time.Millisecond), kgo.RebalanceTimeout(6*time.Second),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RetryTimeout(60*time.Second),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			_, gen := kc.GroupMetadata()
			l.assign(name, gen, a["moves"])
		}))
	go func() {
		defer wg.Done()
		defer kc.Close()
		for ctx.Err() == nil {
			// A poll holds rebalances off until its records are
			// committed (AllowRebalance), so a commit never lands
			// after the partition's next owner read its offset.
			fs := kc.PollRecords(ctx, 50)
			rs := fs.Records()
			for _, r := range rs {
				l.deliver(r)
			}
			if len(rs) > 0 {
				if err := kc.CommitRecords(ctx, rs...); err == nil {
					l.commit(rs)
				}
			}
			kc.AllowRebalance()
		}
	}()
}

// TestCoordinatorFailover: three members read six partitions; the
// broker coordinating the group is stopped, round after round. The group
// moves to the new leader of its offsets partition and reads on from its
// commits: every generation after a move is above every one before, no
// partition has two owners in a generation, nothing is read below a
// successful commit, and every record is read.
func TestCoordinatorFailover(t *testing.T) {
	const rounds, perRound = 10, 120
	cl := kafkaenv.StartCluster(t, 3, settings(0))
	kc := client(t, cl)
	ctx := ctxT(t)
	if r, err := kadm.NewClient(kc).CreateTopic(ctx, 6, 3, nil, "moves"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	produce := func(round int) {
		t.Helper()
		pc := client(t, cl)
		defer pc.Close()
		for i := 0; i < perRound; i++ {
			v := fmt.Sprintf("r%d-%d", round, i)
			if err := pc.ProduceSync(ctx, &kgo.Record{Topic: "moves", Key: []byte(v), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatalf("produce %s: %v", v, err)
			}
		}
	}
	l := newLedger()
	readAll := func(n int) {
		t.Helper()
		waitFor(t, 90*time.Second, fmt.Sprintf("%d records read", n), func() bool {
			l.mu.Lock()
			defer l.mu.Unlock()
			return len(l.seen) >= n
		})
	}
	// stable waits for a generation above after in which all three
	// members were assigned, and returns it.
	// settled waits until the group is Stable with three members and
	// checks that every assignment from index from on is in a
	// generation above after: a generation number is never handed out
	// twice. A group whose coordinator moved after the leader's
	// assignment was stored goes on in its generation, as in Kafka (the
	// new coordinator loads its members); otherwise it rebalances into
	// the next generation.
	settled := func(after int32, from int) {
		t.Helper()
		waitFor(t, 90*time.Second, "the group Stable with three members", func() bool {
			l.mu.Lock()
			for _, a := range l.assigned[from:] {
				if a.generation <= after {
					l.mu.Unlock()
					t.Fatalf("%s assigned generation %d after the move, not above %d", a.member, a.generation, after)
				}
			}
			l.mu.Unlock()
			ac := client(t, cl)
			defer ac.Close()
			dg, err := kadm.NewClient(ac).DescribeGroups(ctx, "moving")
			if err != nil {
				return false
			}
			d := dg["moving"]
			return d.Err == nil && d.State == "Stable" && len(d.Members) == 3
		})
	}

	produce(0)
	mctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		member(mctx, t, cl, l, fmt.Sprintf("m%d", i), &wg)
	}
	defer func() { stop(); wg.Wait() }()
	settled(0, 0)
	readAll(perRound)

	// fullISR waits until the group's offsets partition and every
	// partition of moves are replicated on all three brokers again, so
	// the next stop leaves an in-sync replica to lead.
	fullISR := func() {
		t.Helper()
		off := partitionFor("moving", 50)
		waitFor(t, 90*time.Second, "full ISRs", func() bool {
			ac := client(t, cl)
			defer ac.Close()
			td, err := kadm.NewClient(ac).ListTopicsWithInternal(ctx, "moves", "__consumer_offsets")
			if err != nil {
				return false
			}
			for _, p := range td["moves"].Partitions {
				if len(p.ISR) != 3 {
					return false
				}
			}
			p, ok := td["__consumer_offsets"].Partitions[off]
			return ok && len(p.ISR) == 3
		})
	}
	for round := 1; round <= rounds; round++ {
		fullISR()
		coord := coordinatorOf(t, kc, "moving")
		l.mu.Lock()
		var maxBefore int32
		for g := range l.owners {
			maxBefore = max(maxBefore, g)
		}
		from := len(l.assigned)
		l.mu.Unlock()
		t.Logf("round %d: stopping coordinator %d at generation %d", round, coord, maxBefore)
		stopped := time.Now()
		cl.Broker(coord).Stop()
		kc2 := client(t, cl)
		waitFor(t, 60*time.Second, "the coordinator to move", func() bool { return coordinatorOf(t, kc2, "moving") != coord })
		kc2.Close()
		produce(round)
		settled(maxBefore, from)
		readAll(perRound * (round + 1))
		l.mu.Lock()
		rebalanced := len(l.assigned) > from
		l.mu.Unlock()
		t.Logf("round %d: group Stable and every record read %v after the stop (rebalanced: %v)", round, time.Since(stopped).Round(time.Millisecond), rebalanced)
		cl.Broker(coord).Start()
		for _, e := range cl.Brokers {
			e.WaitBrokers(3)
		}
	}
	stop()
	wg.Wait()

	l.mu.Lock()
	defer l.mu.Unlock()
	for g, parts := range l.owners {
		for p, ms := range parts {
			if len(ms) != 1 {
				t.Errorf("generation %d partition %d owned by %v", g, p, ms)
			}
		}
	}
	// Generations only grow, for each member, across every move.
	last := map[string]int32{}
	for _, a := range l.assigned {
		if a.generation <= last[a.member] {
			t.Errorf("%s assigned generation %d after %d", a.member, a.generation, last[a.member])
		}
		last[a.member] = a.generation
	}
	if len(l.below) > 0 {
		t.Errorf("read below a committed offset: %v", l.below)
	}
	for round := 0; round <= rounds; round++ {
		for i := 0; i < perRound; i++ {
			if v := fmt.Sprintf("r%d-%d", round, i); l.seen[v] == 0 {
				t.Errorf("%s never read", v)
			}
		}
	}
	gens := make([]int32, 0, len(l.owners))
	for g := range l.owners {
		gens = append(gens, g)
	}
	slices.Sort(gens)
	t.Logf("generations %v", gens)
}
