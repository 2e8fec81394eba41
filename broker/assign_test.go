package broker

import (
	"fmt"
	"testing"

	"github.com/zkafka/zkafka/kproto"
)

func racked(pairs ...any) []brokerInfo {
	var out []brokerInfo
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, brokerInfo{id: int32(pairs[i].(int)), rack: pairs[i+1].(string)})
	}
	return out
}

// TestAssignReplicasAsKafka compares placeReplicas with Kafka 3.7's
// AdminUtils.assignReplicasToBrokers for the same inputs. Sources of the
// expected values:
//   - unaware-5x10: AdminUtilsTest/AdminRackAwareTest.testReplicaAssignment
//     (five brokers without racks, ten partitions, RF 3, start index 0);
//   - aware-6x7: AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers
//     (its expected map);
//   - aware-skip: AdminRackAwareTest.testSkipBrokerWithReplicaAlreadyAssigned's
//     inputs (racks a,b,c,a,a, RF 4, start 2), which Kafka's test checks
//     only for distribution; the values were worked out by hand from the
//     algorithm: rack-alternated list [0 1 2 3 4], follower shift 2*3
//     racks, partition 5 moving the shift to 3;
//   - aware-3racks: the process tests' cluster (brokers 1,2,3 in racks
//     a,b,c), worked out by hand: one replica per rack, leaders round-robin.
func TestAssignReplicasAsKafka(t *testing.T) {
	for _, tc := range []struct {
		name                string
		brokers             []brokerInfo
		n, rf, first, start int
		want                string
	}{
		{"unaware-5x10", racked(0, "", 1, "", 2, "", 3, "", 4, ""), 10, 3, 0, 0,
			"[[0 1 2] [1 2 3] [2 3 4] [3 4 0] [4 0 1] [0 2 3] [1 3 4] [2 4 0] [3 0 1] [4 1 2]]"},
		{"aware-6x7", racked(0, "rack1", 1, "rack3", 2, "rack3", 3, "rack2", 4, "rack2", 5, "rack1"), 7, 3, 0, 0,
			"[[0 3 1] [3 1 5] [1 5 4] [5 4 2] [4 2 0] [2 0 3] [0 4 2]]"},
		{"aware-skip", racked(0, "a", 1, "b", 2, "c", 3, "a", 4, "a"), 6, 4, 0, 2,
			"[[2 0 1 3] [3 1 2 4] [4 2 1 3] [0 1 2 3] [1 4 2 3] [2 4 1 3]]"},
		{"aware-3racks", racked(1, "a", 2, "b", 3, "c"), 3, 3, 0, 0, "[[1 2 3] [2 3 1] [3 1 2]]"},
	} {
		got, err := placeReplicas(tc.brokers, tc.n, tc.rf, tc.first, tc.start, tc.start)
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("%s: got %v, %v\nwant %s", tc.name, got, err, tc.want)
		}
	}
}

// TestRackAlternated: Kafka's own expectations
// (AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers).
func TestRackAlternated(t *testing.T) {
	all := racked(0, "rack1", 1, "rack3", 2, "rack3", 3, "rack2", 4, "rack2", 5, "rack1")
	if got := fmt.Sprint(rackAlternated(all)); got != "[0 3 1 5 4 2]" {
		t.Errorf("got %s", got)
	}
	if got := fmt.Sprint(rackAlternated(all[:5])); got != "[0 3 1 4 2]" {
		t.Errorf("without 5: got %s", got)
	}
}

// TestRackAwareSpreadsRacks: for every start and shift, a partition's
// replicas are on distinct brokers, and on distinct racks while RF is at
// most the number of racks (Kafka's guarantee).
func TestRackAwareSpreadsRacks(t *testing.T) {
	bs := racked(0, "r1", 1, "r1", 2, "r2", 3, "r2", 4, "r3", 5, "r3", 6, "r1")
	for start := 0; start < len(bs); start++ {
		for rf := 1; rf <= 4; rf++ {
			got, _ := placeReplicas(bs, 20, rf, 0, start, start)
			for p, reps := range got {
				brokers, racks := map[int32]bool{}, map[string]bool{}
				for _, r := range reps {
					brokers[r], racks[bs[r].rack] = true, true
				}
				if len(brokers) != rf || len(racks) != min(rf, 3) {
					t.Fatalf("start %d rf %d p%d: %v", start, rf, p, reps)
				}
			}
		}
	}
}

// TestPartialRacksRefused: Kafka's AdminOperationException, answered as
// UNKNOWN_SERVER_ERROR with its message.
func TestPartialRacksRefused(t *testing.T) {
	bs := racked(1, "a", 2, "", 3, "c")
	_, err := placeReplicas(bs, 3, 2, 0, 0, 0)
	if code, msg := codeOf(err); code != kproto.CodeUnknownServerError || *msg != msgPartialRacks {
		t.Errorf("new topic: %v %v", code, err)
	}
	if code, msg := codeOf(checkRacksEnforced(bs)); code != kproto.CodeUnknownServerError || *msg != msgPartialRacksEnforced {
		t.Errorf("CreatePartitions: %v", code)
	}
	if checkRacksEnforced(racked(1, "", 2, "")) != nil || checkRacksEnforced(racked(1, "a", 2, "b")) != nil {
		t.Error("all or none with racks must pass")
	}
}

// TestAddedReplicasContinueThePattern: partitions added to a topic follow
// on from its first partition's leader, as if the topic had been created
// with them (Kafka's createPartitions: start index and shift fixed at
// partition 0's first replica), with and without racks.
func TestAddedReplicasContinueThePattern(t *testing.T) {
	live := racked(1, "", 2, "", 3, "", 4, "")
	ids := []int32{1, 2, 3, 4}
	for start := 0; start < 4; start++ {
		all := assignRackUnaware(ids, 9, 3, 0, start, start)
		got, err := addedReplicas(live, all[:3], 6)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(all[3:]) {
			t.Errorf("start %d: added %v, want %v", start, got, all[3:])
		}
	}
	aware := racked(0, "rack1", 1, "rack3", 2, "rack3", 3, "rack2", 4, "rack2", 5, "rack1")
	all, _ := placeReplicas(aware, 7, 3, 0, 0, 0)
	got, err := addedReplicas(aware, all[:3], 4)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(all[3:]) {
		t.Errorf("rack-aware: added %v, want %v", got, all[3:])
	}
}
