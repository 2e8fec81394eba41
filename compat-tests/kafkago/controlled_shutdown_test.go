package kafkago

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/broker/controller"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// createFullISR creates topic name with this assignment by writing its
// znodes as a Kafka tool would, each partition's state naming its first
// replica leader and every replica in the ISR (the broker's controller
// puts only the leader in a new ISR while followers do not replicate),
// and waits until Metadata shows every leader.
func createFullISR(t *testing.T, cl *kafkaenv.Cluster, name string, assignment [][]int32) {
	t.Helper()
	e := cl.Broker(1)
	acl := zk.WorldACL(zk.PermAll)
	ops := []any{
		&zk.CreateRequest{Path: e.Path(zkmeta.TopicConfigPath(name)), Data: []byte(`{"version":1,"config":{}}`), Acl: acl},
		&zk.CreateRequest{Path: e.Path(zkmeta.TopicPath(name)), Data: zkmeta.EncodeTopicZNode(zkmeta.NewUUID(), assignment), Acl: acl},
		&zk.CreateRequest{Path: e.Path(zkmeta.PartitionsPath(name)), Acl: acl},
	}
	for p, a := range assignment {
		s := controller.LeaderAndISR{Leader: a[0], ISR: a, ControllerEpoch: controllerEpoch(t, e)}
		ops = append(ops, &zk.CreateRequest{Path: e.Path(zkmeta.PartitionPath(name, p)), Acl: acl},
			&zk.CreateRequest{Path: e.Path(zkmeta.StatePath(name, p)), Data: controller.StateZNode(s), Acl: acl})
	}
	if _, err := e.ZK().Multi(ops...); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(e.Client(kgo.SeedBrokers(cl.Seeds()...)))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctxT(t), name)
		ok := err == nil && len(td[name].Partitions) == len(assignment)
		for _, p := range td[name].Partitions {
			ok = ok && p.Err == nil && p.Leader == assignment[p.Partition][0] && len(p.ISR) == len(assignment[p.Partition])
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never had its leaders: %+v %v", name, td[name].Partitions, err)
		}
	}
}

// loadProducer produces numbered records round-robin to n partitions of
// topic until stop; every ProduceSync that fails is an error the client
// did not retry by itself (franz-go retries the retriable ones).
type loadProducer struct {
	mu     sync.Mutex
	acked  int
	failed []error
	stop   context.CancelFunc
	done   chan struct{}
}

func startLoad(t *testing.T, cl *kafkaenv.Cluster, topic string, n int) *loadProducer {
	c := cl.Broker(1).Client(kgo.SeedBrokers(cl.Seeds()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(30*time.Second))
	ctx, stop := context.WithCancel(context.Background())
	lp := &loadProducer{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(lp.done)
		for i := 0; ctx.Err() == nil && i < 1_000_000; i++ {
			r := &kgo.Record{Topic: topic, Partition: int32(i % n), Value: []byte(fmt.Sprint(i))}
			err := c.ProduceSync(ctx, r).FirstErr()
			lp.mu.Lock()
			if err == nil {
				lp.acked++
			} else if ctx.Err() == nil {
				lp.failed = append(lp.failed, err)
			}
			lp.mu.Unlock()
		}
	}()
	return lp
}

// waitAcked waits (bounded) until n more records are acknowledged.
func (lp *loadProducer) waitAcked(t *testing.T, n int) {
	t.Helper()
	lp.mu.Lock()
	want := lp.acked + n
	lp.mu.Unlock()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		lp.mu.Lock()
		got := lp.acked
		lp.mu.Unlock()
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d records acknowledged, want %d", got, want)
		}
	}
}

func (lp *loadProducer) finish(t *testing.T) {
	t.Helper()
	lp.stop()
	<-lp.done
	if len(lp.failed) > 0 {
		t.Fatalf("the producer failed %d records (first: %v)", len(lp.failed), lp.failed[0])
	}
}

// stateOf reads a partition's state znode.
func stateOf(t *testing.T, e *env, topic string, p int) partitionState {
	t.Helper()
	s, err := readState(t, e.ZK(), e, topic, p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// stopAndWatch stops broker id while watching, on one ZooKeeper session
// (whose watch events arrive in ZooKeeper's order), the state znode of a
// partition it leads and its /brokers/ids registration: it returns
// whether the leadership moved before the registration went, and how long
// after Stop began the state changed and Stop returned.
func stopAndWatch(t *testing.T, cl *kafkaenv.Cluster, id int32, topic string, led int) (movedFirst bool, moved, stopped time.Duration) {
	t.Helper()
	e := cl.Broker(id)
	z := cl.Broker(otherThan(id)).ZK()
	_, _, stateCh, err := z.GetW(e.Path(zkmeta.StatePath(topic, led)))
	if err != nil {
		t.Fatal(err)
	}
	_, _, regCh, err := z.ExistsW(e.Path(fmt.Sprintf("/brokers/ids/%d", id)))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stopDone := make(chan time.Duration, 1)
	go func() { e.Stop(); stopDone <- time.Since(start) }()
	select {
	case <-stateCh:
		movedFirst, moved = true, time.Since(start)
	case <-regCh:
		<-stateCh
		moved = time.Since(start)
	case <-time.After(20 * time.Second):
		t.Fatalf("broker %d's stop changed nothing in 20 s", id)
	}
	return movedFirst, moved, <-stopDone
}

func otherThan(id int32) int32 {
	if id == 1 {
		return 2
	}
	return 1
}

var shutdownAssignment = [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}, {2, 1, 3}}

// checkMovedOff checks, after broker id stopped, that it leads nothing
// and is in no ISR, each partition it led being led by another replica
// at the next leader epoch.
func checkMovedOff(t *testing.T, e *env, topic string, id int32) {
	t.Helper()
	for p, a := range shutdownAssignment {
		s := stateOf(t, e, topic, p)
		if s.Leader == id || slices.Contains(s.ISR, id) || s.Leader < 0 {
			t.Errorf("%s-%d after broker %d stopped: %+v", topic, p, id, s)
		}
		if a[0] == id && s.LeaderEpoch != 1 {
			t.Errorf("%s-%d moved at leader epoch %d, want 1", topic, p, s.LeaderEpoch)
		}
	}
}

// TestControlledShutdownMovesLeadership: a broker that stops (Shutdown,
// as on SIGTERM) first has the controller move every leadership it holds
// to another ISR member and take it out of every ISR — the state znode
// changes before its registration goes — while a franz-go producer writes
// to every partition and sees no error it did not retry by itself.
func TestControlledShutdownMovesLeadership(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3)
	createFullISR(t, cl, "cs", shutdownAssignment)
	lp := startLoad(t, cl, "cs", len(shutdownAssignment))
	lp.waitAcked(t, 200)
	movedFirst, moved, stopped := stopAndWatch(t, cl, 2, "cs", 1)
	t.Logf("controlled shutdown of broker 2: leadership moved %v after Shutdown began, Shutdown took %v", moved, stopped)
	if !movedFirst {
		t.Fatal("broker 2's registration went before its leadership moved: no controlled shutdown")
	}
	if moved > 5*time.Second {
		t.Errorf("moving leadership took %v", moved)
	}
	checkMovedOff(t, cl.Broker(1), "cs", 2)
	lp.waitAcked(t, 200)
	lp.finish(t)
}

// TestControllerShutdownHandsOver: the controller's own controlled
// shutdown moves its leaderships (its loop answers its own request), then
// it resigns: /controller goes before its registration, and another
// broker is the controller, at the next controller epoch.
func TestControllerShutdownHandsOver(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3)
	createFullISR(t, cl, "hs", shutdownAssignment)
	before := controllerEpoch(t, cl.Broker(1))
	lp := startLoad(t, cl, "hs", len(shutdownAssignment))
	lp.waitAcked(t, 200)
	z := cl.Broker(2).ZK()
	_, _, ctrlCh, err := z.ExistsW(cl.Broker(2).Path("/controller"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, regCh, err := z.ExistsW(cl.Broker(2).Path("/brokers/ids/1"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	stopped := make(chan struct{})
	go func() { cl.Broker(1).Stop(); close(stopped) }()
	select {
	case <-ctrlCh:
	case <-regCh:
		t.Fatal("the controller's registration went before /controller: it did not resign")
	case <-time.After(20 * time.Second):
		t.Fatal("the controller never left")
	}
	var now struct {
		BrokerID int32 `json:"brokerid"`
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		data, _, err := z.Get(cl.Broker(2).Path("/controller"))
		if err == nil && json.Unmarshal(data, &now) == nil && now.BrokerID != 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no other broker took control: %s %v", data, err)
		}
	}
	t.Logf("controller 1 handed over to broker %d %v after Shutdown began", now.BrokerID, time.Since(start))
	<-stopped
	if got := controllerEpoch(t, cl.Broker(2)); got != before+1 {
		t.Errorf("controller epoch %d, want %d", got, before+1)
	}
	checkMovedOff(t, cl.Broker(2), "hs", 1)
	lp.waitAcked(t, 200)
	lp.finish(t)
}

// TestControlledShutdownRetries: a broker whose partition cannot move (its
// ISR is the broker alone) asks controlled.shutdown.max.retries times,
// controlled.shutdown.retry.backoff.ms apart, then shuts down anyway; the
// partition is then offline, as after a crash.
func TestControlledShutdownRetries(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 2, kafkaenv.Configure(func(c *broker.Config) {
		c.InterBroker.ControlledShutdownMaxRetries = 2
		c.InterBroker.ControlledShutdownRetryBackoff = 100 * time.Millisecond
	}))
	createFullISR(t, cl, "stuck", [][]int32{{2, 1}})
	z := cl.Broker(1).ZK()
	s := stateOf(t, cl.Broker(1), "stuck", 0)
	data := controller.StateZNode(controller.LeaderAndISR{Leader: 2, LeaderEpoch: s.LeaderEpoch, ISR: []int32{2}, ControllerEpoch: s.ControllerEpoch})
	if _, err := z.Set(cl.Broker(1).Path(zkmeta.StatePath("stuck", 0)), data, -1); err != nil {
		t.Fatal(err)
	}
	// The controller reads the state it did not write when it re-reads the
	// topic (here: on the next topic change).
	if r, err := kadm.NewClient(cl.Broker(1).Client()).CreateTopic(ctxT(t), 1, 1, nil, "poke"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	e := cl.Broker(2)
	start := time.Now()
	e.Stop()
	took := time.Since(start)
	if n := e.Logs.Count("WARN controlled shutdown: leadership not yet moved"); n != 2 {
		t.Errorf("%d attempts logged, want 2: %v", n, e.Logs.All())
	}
	if n := e.Logs.Count("WARN controlled shutdown failed; proceeding"); n != 1 {
		t.Errorf("no unclean shutdown logged: %v", e.Logs.All())
	}
	if took < 100*time.Millisecond {
		t.Errorf("Shutdown took %v, less than one retry backoff", took)
	}
	waitState(t, z, cl.Broker(1), "stuck", 0, "offline", func(s partitionState) bool { return s.Leader == -1 })
}

// TestRollingRestartUnderLoad: every broker is restarted in turn (a
// controlled shutdown, then a start on the same data) while a franz-go
// producer writes to every partition: it sees no error it did not retry
// by itself. (Without replication a restarted broker does not rejoin the
// ISRs, so the last restarts cannot move every leadership: those
// partitions wait for their broker to return.)
func TestRollingRestartUnderLoad(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3)
	createFullISR(t, cl, "roll", shutdownAssignment)
	lp := startLoad(t, cl, "roll", len(shutdownAssignment))
	lp.waitAcked(t, 100)
	for id := int32(1); id <= 3; id++ {
		start := time.Now()
		cl.Broker(id).Restart()
		for _, e := range cl.Brokers {
			e.WaitBrokers(3)
		}
		t.Logf("broker %d restarted in %v", id, time.Since(start))
		lp.waitAcked(t, 100)
	}
	lp.finish(t)
}
