package kafkagroups

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// The ZooKeeper, brokers and clients are kafkaenv's; this file sets
// the brokers up for groups and adds helpers.

func TestMain(m *testing.M) { kafkaenv.Main(m) }

// env is one broker on its own chroot and data directory (a type of its
// own for the startMember method).
type env struct{ *kafkaenv.Env }

// startBroker starts a broker with test-friendly group settings: no
// initial rebalance delay and a 500 ms minimum session timeout.
func startBroker(t testing.TB, mod ...func(*broker.Config)) *env {
	t.Helper()
	e := kafkaenv.Start(t, kafkaenv.ChrootPrefix("groups-"), kafkaenv.Configure(groupSettings),
		kafkaenv.Configure(mod...))
	return &env{e}
}

func groupSettings(c *broker.Config) {
	c.Groups.InitialRebalanceDelay = 0
	c.Groups.MinSessionTimeout = 500 * time.Millisecond
}

// ctxT times out after 60 s or at the end of the test.
func ctxT(t testing.TB) context.Context { return kafkaenv.Context(t, 60*time.Second) }

// waitFor polls cond every 20 ms for at most d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func createTopic(t testing.TB, e *env, name string, partitions int32) {
	t.Helper()
	resp, err := e.Admin().CreateTopic(ctxT(t), partitions, 1, nil, name)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", name, err, resp.Err)
	}
}

// produce writes n records "prefix-i" round robin over partitions.
func produce(t testing.TB, e *env, topic, prefix string, n, partitions int) {
	t.Helper()
	c := e.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer c.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := 0; i < n; i++ {
		wg.Add(1)
		r := &kgo.Record{Partition: int32(i % partitions), Value: []byte(prefix + "-" + itoa(i))}
		c.Produce(ctxT(t), r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// waitCoordinator waits until group's coordinator answers (the offsets
// topic exists and the group's partition has a leader that loaded it),
// for tests that send group requests by hand.
func waitCoordinator(t testing.TB, cl *kgo.Client, group string) {
	t.Helper()
	ctx := ctxT(t)
	waitFor(t, 30*time.Second, "the coordinator of "+group, func() bool {
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey = group
		r, err := fc.RequestWith(ctx, cl)
		if err != nil || r.ErrorCode != 0 {
			return false
		}
		d := kmsg.NewPtrDescribeGroupsRequest()
		d.Groups = []string{group}
		dr, err := d.RequestWith(ctx, cl)
		return err == nil && len(dr.Groups) == 1 && dr.Groups[0].ErrorCode == 0
	})
}
