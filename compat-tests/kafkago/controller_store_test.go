package kafkago

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/controller"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestControllerStoreFencing runs the controller's ZooKeeper store
// against the real server (zkafka's, or Apache ZooKeeper's with
// ZKAFKA_TEST_ZK): the election multi, a state write, a write fenced by a
// newer /controller_epoch (ErrFenced: the multi's first op failed), and a
// stale state CAS, which is not a fencing.
func TestControllerStoreFencing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	chroot := "/controller-store-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	zc, err := zkmeta.Dial(ctx, kafkaenv.ZooKeeper()+chroot, 6*time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	for _, p := range zkmeta.PersistentPaths {
		if err := zc.EnsurePersistent(p); err != nil {
			t.Fatal(err)
		}
	}
	other := &controller.ZKStore{ZK: zc, BrokerID: 8}
	s := &controller.ZKStore{ZK: zc, BrokerID: 7}
	epoch, version, err := s.Elect()
	if err != nil || epoch != 1 {
		t.Fatalf("first election: epoch %d, %v", epoch, err)
	}
	if _, _, err := other.Elect(); !errors.Is(err, controller.ErrNotElected) {
		t.Fatalf("Elect while /controller is held: %v, want ErrNotElected", err)
	}
	id := controller.PartitionID{Topic: "cs", Partition: 0}
	if err := zc.Create(zkmeta.TopicPath("cs"), zkmeta.EncodeTopicZNode(zkmeta.NewUUID(), [][]int32{{7}}), 0); err != nil {
		t.Fatal(err)
	}
	vs, err := s.WriteStates(version, []controller.StateWrite{{Partition: id, State: controller.LeaderAndISR{Leader: 7, ISR: []int32{7}, ControllerEpoch: epoch}, ZkVersion: -1}})
	if err != nil || vs[0] != 0 {
		t.Fatalf("create state: %v %v", vs, err)
	}
	// A stale CAS on the state is an ordinary failure, not a fencing.
	_, err = s.WriteStates(version, []controller.StateWrite{{Partition: id, State: controller.LeaderAndISR{Leader: 7, LeaderEpoch: 1, ISR: []int32{7}}, ZkVersion: 5}})
	if !errors.Is(err, zk.ErrBadVersion) || errors.Is(err, controller.ErrFenced) {
		t.Fatalf("stale state CAS: %v, want zk.ErrBadVersion", err)
	}
	// Another broker wins after /controller goes: the old controller's
	// next write is fenced and changes nothing.
	if err := zc.Conn.Delete(zc.Path("/controller"), -1); err != nil {
		t.Fatal(err)
	}
	if e2, _, err := other.Elect(); err != nil || e2 != 2 {
		t.Fatalf("second election: epoch %d, %v", e2, err)
	}
	_, err = s.WriteStates(version, []controller.StateWrite{{Partition: id, State: controller.LeaderAndISR{Leader: 7, LeaderEpoch: 1, ISR: []int32{7}}, ZkVersion: 0}})
	if !errors.Is(err, controller.ErrFenced) {
		t.Fatalf("write after a newer controller epoch: %v, want ErrFenced", err)
	}
	if data, st, err := zc.Get(zkmeta.StatePath("cs", 0)); err != nil || st.Version != 0 {
		t.Fatalf("fenced write changed the state: %s version %d (%v)", data, st.Version, err)
	}
}
