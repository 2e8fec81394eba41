package zkafkatest_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestMoveController: the controller moves to the broker asked for, and
// every broker's Metadata says so.
func TestMoveController(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(3))
	now, err := cl.Controller()
	must(t, err)
	to := now%3 + 1 // another broker
	must(t, cl.MoveController(to))
	if id, err := cl.Controller(); err != nil || id != to {
		t.Fatalf("controller %d (%v), want %d", id, err, to)
	}
	adm := kadm.NewClient(client(t, cl))
	must(t, poll(t, 30*time.Second, func() error {
		md, err := adm.BrokerMetadata(ctx(t, 5*time.Second))
		if err == nil && md.Controller != to {
			return errf("metadata names controller %d", md.Controller)
		}
		return err
	}))
}

// TestMoveLeaderRefusesNonReplica: a broker that holds no replica cannot
// lead; the error says so without waiting on the controller.
func TestMoveLeaderRefusesNonReplica(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(2), zkafkatest.Topic("t", 1, 1))
	leader, err := cl.Leader("t", 0)
	must(t, err)
	other := 3 - leader
	if err := cl.MoveLeader("t", 0, other); err == nil {
		t.Fatalf("moved the leadership of an RF 1 partition to broker %d, not a replica", other)
	}
	if err := cl.MoveLeader("t", 0, leader); err != nil {
		t.Fatalf("moving to the current leader: %v", err)
	}
}
