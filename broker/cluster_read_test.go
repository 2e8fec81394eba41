package broker

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/internal/zktest"
)

// newZKTestBroker is a broker with a ZooKeeper session (an in-process
// server) and nothing else started.
func newZKTestBroker(t *testing.T) *Broker {
	t.Helper()
	s := zktest.Start(t)
	z, err := zkmeta.Dial(context.Background(), s.Addr().String(), 10*time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z.Close)
	b := &Broker{cfg: DefaultConfig(t.TempDir()), log: slog.New(slog.DiscardHandler), now: time.Now, done: make(chan struct{}), zk: z}
	b.cluster.init()
	return b
}

func stateZNode(leader, epoch int32, isr ...int32) []byte {
	return zkmeta.MustJSON(zkmeta.PartitionStateZNode{ControllerEpoch: 1, Leader: leader, Version: 1, LeaderEpoch: epoch, ISR: isr})
}

// TestReadTopicStraddlingAMove: the controller's multi of a reassignment
// (replicas [0] to [0 3] in the topic znode, leader epoch 0 to 1 in the
// state znode) lands between readTopic's read of the topic znode and its
// read of the state. The read must not pair the old replicas with the new
// epoch: a leader that took epoch 1 with replicas [0] would never know
// follower 3 (the same epoch again changes only the ISR), and 3 would
// never join the ISR.
func TestReadTopicStraddlingAMove(t *testing.T) {
	b := newZKTestBroker(t)
	id := zkmeta.NewUUID()
	state := zkmeta.StatePath("m", 0)
	for _, p := range []string{"/brokers", "/brokers/topics", zkmeta.TopicPath("m"), zkmeta.PartitionsPath("m"), zkmeta.PartitionPath("m", 0)} {
		if err := b.zk.EnsurePersistent(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.zk.Set(zkmeta.TopicPath("m"), zkmeta.EncodeTopicZNode(id, [][]int32{{0}}), -1); err != nil {
		t.Fatal(err)
	}
	if err := b.zk.Create(state, stateZNode(0, 0, 0), 0); err != nil {
		t.Fatal(err)
	}
	moved := false
	afterTopicZnodeRead = func(string) {
		if moved {
			return
		}
		moved = true
		err := b.zk.Multi(&zk.SetDataRequest{Path: zkmeta.TopicPath("m"), Data: zkmeta.EncodeTopicZNode(id, [][]int32{{0, 3}}), Version: -1},
			&zk.SetDataRequest{Path: state, Data: stateZNode(0, 1, 0), Version: -1})
		if err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { afterTopicZnodeRead = nil })
	tp, err := b.readTopic("m")
	if err != nil {
		t.Fatal(err)
	}
	if !moved {
		t.Fatal("the move was not made")
	}
	if !slices.Equal(tp.replicas[0], []int32{0, 3}) || tp.leaderEpochs[0] != 1 {
		t.Fatalf("read replicas %v with leader epoch %d, want [0 3] with 1", tp.replicas[0], tp.leaderEpochs[0])
	}
}
