package replica

import (
	"testing"
	"time"
)

// TestSelectRackAware follows Kafka's ReplicaSelectorTest
// (testSameRackSelector and the rules of RackAwareReplicaSelector).
func TestSelectRackAware(t *testing.T) {
	leader := ReplicaView{ID: 0, Rack: "rack-a", LEO: 10}
	reps := []ReplicaView{
		{ID: 1, Rack: "rack-b", LEO: 5, SinceCaughtUp: time.Second},
		{ID: 2, Rack: "rack-b", LEO: 10, SinceCaughtUp: 2 * time.Second},
		{ID: 3, Rack: "rack-b", LEO: 10, SinceCaughtUp: time.Second},
		{ID: 4, Rack: "rack-c", LEO: 10},
	}
	for _, tc := range []struct {
		rack string
		want int32
	}{
		{"", 0},       // no client rack: the leader
		{"rack-a", 0}, // the leader's rack
		{"rack-b", 3}, // most caught up: LEO 10, then the most recent catch-up
		{"rack-c", 4},
		{"rack-d", 0}, // no replica there: the leader
	} {
		if got := SelectRackAware(tc.rack, leader, reps); got != tc.want {
			t.Errorf("rack %q: got %d, want %d", tc.rack, got, tc.want)
		}
	}
	tie := []ReplicaView{{ID: 7, Rack: "r", LEO: 1}, {ID: 5, Rack: "r", LEO: 1}}
	if got := SelectRackAware("r", leader, tie); got != 5 {
		t.Errorf("tie: got %d, want the lowest id 5", got)
	}
}
