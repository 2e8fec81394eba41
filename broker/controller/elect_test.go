package controller

import (
	"fmt"
	"slices"
	"testing"
)

func liveSet(ids ...int32) func(int32) bool {
	return func(id int32) bool { return slices.Contains(ids, id) }
}

func TestNewPartitionState(t *testing.T) {
	for _, tc := range []struct {
		replicas  []int32
		live      []int32
		isrIsLive bool
		want      string
	}{
		{[]int32{1, 2, 3}, []int32{1, 2, 3}, true, "leader=1 epoch=0 isr=[1 2 3]"},
		{[]int32{1, 2, 3}, []int32{2, 3}, true, "leader=2 epoch=0 isr=[2 3]"},
		{[]int32{3, 1, 2}, []int32{1, 2, 3}, false, "leader=3 epoch=0 isr=[3]"},
		{[]int32{1, 2}, []int32{3}, true, "none"},
	} {
		s, ok := NewPartitionState(tc.replicas, liveSet(tc.live...), tc.isrIsLive, 7)
		if got := fmtState(s, ok); got != tc.want {
			t.Errorf("NewPartitionState(%v, live %v): %s, want %s", tc.replicas, tc.live, got, tc.want)
		}
		if ok && s.ControllerEpoch != 7 {
			t.Errorf("controller epoch %d, want 7", s.ControllerEpoch)
		}
	}
}

func TestElectOffline(t *testing.T) {
	for _, tc := range []struct {
		replicas []int32
		isr      []int32
		live     []int32
		unclean  bool
		want     string
	}{
		// The first live ISR member in assignment order, not in ISR order.
		{[]int32{1, 2, 3}, []int32{3, 2, 1}, []int32{2, 3}, false, "leader=2 epoch=5 isr=[3 2]"},
		// A live replica out of the ISR is not eligible without unclean election.
		{[]int32{1, 2, 3}, []int32{1}, []int32{2, 3}, false, "none"},
		{[]int32{1, 2, 3}, []int32{1}, []int32{3, 2}, true, "leader=2 epoch=5 isr=[2]"},
		{[]int32{1, 2, 3}, []int32{1, 2}, []int32{}, true, "none"},
	} {
		cur := LeaderAndISR{Leader: 1, LeaderEpoch: 4, ISR: tc.isr}
		s, ok := electOffline(tc.replicas, cur, liveSet(tc.live...), tc.unclean)
		if got := fmtState(s, ok); got != tc.want {
			t.Errorf("electOffline(%v, isr %v, live %v, unclean %v): %s, want %s", tc.replicas, tc.isr, tc.live, tc.unclean, got, tc.want)
		}
	}
}

func TestRemoveReplica(t *testing.T) {
	for _, tc := range []struct {
		leader  int32
		isr     []int32
		replica int32
		want    string
	}{
		{1, []int32{1, 2, 3}, 2, "leader=1 epoch=5 isr=[1 3]"},
		{1, []int32{1, 2, 3}, 1, "leader=-1 epoch=5 isr=[2 3]"},
		// Never the last member: it keeps the partition's history.
		{1, []int32{1}, 1, "leader=-1 epoch=5 isr=[1]"},
		{1, []int32{1, 3}, 2, "none"},
	} {
		s, ok := removeReplica(LeaderAndISR{Leader: tc.leader, LeaderEpoch: 4, ISR: tc.isr}, tc.replica)
		if got := fmtState(s, ok); got != tc.want {
			t.Errorf("removeReplica(leader %d isr %v, %d): %s, want %s", tc.leader, tc.isr, tc.replica, got, tc.want)
		}
	}
}

func fmtState(s LeaderAndISR, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprintf("leader=%d epoch=%d isr=%v", s.Leader, s.LeaderEpoch, s.ISR)
}
