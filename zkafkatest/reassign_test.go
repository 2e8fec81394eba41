package zkafkatest_test

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/zkafkatest"
)

// TestMoveLeader: the leadership of a partition moves to the broker
// asked for (reassignment to put it first, then a preferred replica
// election), and a producer follows it.
func TestMoveLeader(t *testing.T) {
	cl := zkafkatest.StartCluster(t, zkafkatest.Brokers(3), zkafkatest.Topic("t", 1, 3))
	c := client(t, cl, kgo.RequiredAcks(kgo.AllISRAcks()))
	produce(t, c, "t", "before")
	leader, err := cl.Leader("t", 0)
	must(t, err)
	to := leader%3 + 1
	must(t, cl.MoveLeader("t", 0, to))
	if now, err := cl.Leader("t", 0); err != nil || now != to {
		t.Fatalf("leader %d (%v), want %d", now, err, to)
	}
	produce(t, c, "t", "after")
	if got := consume(t, cl, "t", 2); !slices.Equal(got, []string{"before", "after"}) {
		t.Fatalf("consumed %v", got)
	}
}
