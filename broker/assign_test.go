package broker

import (
	"fmt"
	"testing"
)

// TestAssignReplicasAsKafka checks the placement against Kafka's own
// expectation (AdminUtilsTest.testReplicaAssignment: five brokers, ten
// partitions, RF 3, start index 0).
func TestAssignReplicasAsKafka(t *testing.T) {
	got := assignReplicasFrom([]int32{0, 1, 2, 3, 4}, 10, 3, 0, 0, 0)
	want := "[[0 1 2] [1 2 3] [2 3 4] [3 4 0] [4 0 1] [0 2 3] [1 3 4] [2 4 0] [3 0 1] [4 1 2]]"
	if fmt.Sprint(got) != want {
		t.Fatalf("assignment\n got %v\nwant %s", got, want)
	}
	// Every partition's replicas are distinct, for every start and shift.
	for start := 0; start < 3; start++ {
		for shift := 0; shift < 3; shift++ {
			for _, r := range assignReplicasFrom([]int32{7, 8, 9}, 7, 3, 2, start, shift) {
				if r[0] == r[1] || r[1] == r[2] || r[0] == r[2] {
					t.Fatalf("start %d shift %d: replicas %v repeat a broker", start, shift, r)
				}
			}
		}
	}
}

// TestAddedReplicasContinueThePattern: partitions added to a topic follow
// on from its first partition's leader, as if the topic had been created
// with them (Kafka's createPartitions: start index and shift fixed at
// partition 0's first replica).
func TestAddedReplicasContinueThePattern(t *testing.T) {
	live := []brokerInfo{{id: 1}, {id: 2}, {id: 3}, {id: 4}}
	ids := []int32{1, 2, 3, 4}
	for start := 0; start < 4; start++ {
		all := assignReplicasFrom(ids, 9, 3, 0, start, start)
		got := addedReplicas(live, all[:3], 6)
		if fmt.Sprint(got) != fmt.Sprint(all[3:]) {
			t.Errorf("start %d: added %v, want %v", start, got, all[3:])
		}
	}
}
