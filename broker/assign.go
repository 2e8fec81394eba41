package broker

import (
	"math/rand/v2"
	"slices"

	"github.com/zkafka/zkafka/kproto"
)

// Replica placement, Kafka's AdminUtils.assignReplicasToBrokers (3.7,
// server-common), for CreateTopics, auto-created topics and
// CreatePartitions. Its goals: replicas spread evenly over the brokers,
// a broker's partitions have their other replicas spread over the other
// brokers, and when every broker has a rack the replicas of a partition
// are on different racks where possible.
//
//   - no broker has a rack: the rack-unaware assignment. Partition p's
//     first replica is brokers[(p+start) % B] (brokers sorted by id); the
//     j-th follower is 1 + (shift+j) % (B-1) places after it, and shift
//     grows by one every B partitions;
//   - every broker has one: the rack-aware assignment. The same walk goes
//     over the rack-alternated list (the racks sorted by name, each rack's
//     brokers sorted by id, one broker of each rack in turn), with the
//     follower shift multiplied by the number of racks; a candidate
//     follower is skipped while its rack already holds a replica and some
//     rack holds none, or while it holds one and some broker holds none;
//   - only some have one: Kafka's AdminOperationException, which its
//     ZooKeeper-mode admin manager answers as UNKNOWN_SERVER_ERROR with
//     the message.
//
// start and shift are random for a new topic; CreatePartitions fixes both
// at the index (in the id-sorted list, also for the rack-alternated one,
// as Kafka) of the first broker whose id is at least partition 0's first
// replica, and numbers the new partitions on from the existing ones, so
// that they continue the topic's pattern.

// Kafka's messages for brokers of which only some have a rack: from
// AdminUtils (new topics) and from AdminZkClient.getBrokerMetadatas in
// its Enforced mode (CreatePartitions).
const (
	msgPartialRacks         = "Not all brokers have rack information for replica rack aware assignment."
	msgPartialRacksEnforced = "Not all brokers have rack information. Add --disable-rack-aware in command line" +
		" to make replica assignment without rack information."
)

// assignReplicas places the n partitions of a new topic on the live
// brokers (sorted by id), from a random start and follower shift.
func assignReplicas(live []brokerInfo, n, rf int) ([][]int32, error) {
	return placeReplicas(live, n, rf, 0, rand.IntN(len(live)), rand.IntN(len(live)))
}

// addedReplicas places n new partitions of a topic whose partitions are
// existing (Kafka's AdminZkClient.createNewPartitionsAssignment).
func addedReplicas(live []brokerInfo, existing [][]int32, n int) ([][]int32, error) {
	start := 0
	if i := slices.IndexFunc(live, func(b brokerInfo) bool { return b.id >= existing[0][0] }); i >= 0 {
		start = i
	}
	return placeReplicas(live, n, len(existing[0]), len(existing), start, start)
}

// placeReplicas is the assignment of partitions [first, first+n) with a
// fixed start index and follower shift, rack-aware when the brokers have
// racks. brokers are sorted by id.
func placeReplicas(brokers []brokerInfo, n, rf, first, start, shift int) ([][]int32, error) {
	racks := 0
	for _, b := range brokers {
		if b.rack != "" {
			racks++
		}
	}
	switch racks {
	case 0:
		ids := make([]int32, len(brokers))
		for i, b := range brokers {
			ids[i] = b.id
		}
		return assignRackUnaware(ids, n, rf, first, start, shift), nil
	case len(brokers):
		return assignRackAware(brokers, n, rf, first, start, shift), nil
	}
	return nil, adminErr(kproto.CodeUnknownServerError, msgPartialRacks)
}

// checkRacksEnforced refuses brokers of which only some have a rack.
func checkRacksEnforced(brokers []brokerInfo) error {
	with := 0
	for _, b := range brokers {
		if b.rack != "" {
			with++
		}
	}
	if with > 0 && with < len(brokers) {
		return adminErr(kproto.CodeUnknownServerError, msgPartialRacksEnforced)
	}
	return nil
}

// assignRackUnaware is Kafka's rack-unaware walk over brokers.
func assignRackUnaware(brokers []int32, n, rf, first, start, shift int) [][]int32 {
	nb := len(brokers)
	out := make([][]int32, n)
	for i := range out {
		p := first + i
		if p > 0 && p%nb == 0 {
			shift++
		}
		leader := (p + start) % nb
		replicas := []int32{brokers[leader]}
		for j := 0; j < rf-1; j++ {
			replicas = append(replicas, brokers[followerIndex(leader, shift, j, nb)])
		}
		out[i] = replicas
	}
	return out
}

// followerIndex is the index of a partition's follower whose leader is
// at index leader: 1 + (shift + j) % (nb-1) places after it (Kafka's
// AdminUtils.replicaIndex).
func followerIndex(leader, shift, j, nb int) int {
	return (leader + 1 + (shift+j)%(nb-1)) % nb
}

// assignRackAware is Kafka's rack-aware walk over the rack-alternated
// list of brokers (all with a rack).
func assignRackAware(brokers []brokerInfo, n, rf, first, start, shift int) [][]int32 {
	rackOf := make(map[int32]string, len(brokers))
	for _, b := range brokers {
		rackOf[b.id] = b.rack
	}
	list := rackAlternated(brokers)
	nb := len(list)
	numRacks := countRacks(brokers)
	out := make([][]int32, n)
	for i := range out {
		p := first + i
		if p > 0 && p%nb == 0 {
			shift++
		}
		leaderIdx := (p + start) % nb
		leader := list[leaderIdx]
		replicas := []int32{leader}
		racksUsed := map[string]bool{rackOf[leader]: true}
		used := map[int32]bool{leader: true}
		k := 0
		for len(replicas) < rf {
			b := list[followerIndex(leaderIdx, shift*numRacks, k, nb)]
			k++
			r := rackOf[b]
			if racksUsed[r] && len(racksUsed) < numRacks || used[b] && len(used) < nb {
				continue
			}
			replicas = append(replicas, b)
			racksUsed[r], used[b] = true, true
		}
		out[i] = replicas
	}
	return out
}

// rackAlternated is Kafka's getRackAlternatedBrokerList: the racks sorted
// by name, each rack's brokers sorted by id, and one broker from each rack
// in turn until all are listed.
func rackAlternated(brokers []brokerInfo) []int32 {
	byRack := map[string][]int32{}
	for _, b := range brokers {
		byRack[b.rack] = append(byRack[b.rack], b.id)
	}
	racks := make([]string, 0, len(byRack))
	for r, ids := range byRack {
		slices.Sort(ids)
		racks = append(racks, r)
	}
	slices.Sort(racks)
	out := make([]int32, 0, len(brokers))
	for round := 0; len(out) < len(brokers); round++ {
		for _, r := range racks {
			if ids := byRack[r]; round < len(ids) {
				out = append(out, ids[round])
			}
		}
	}
	return out
}

func countRacks(brokers []brokerInfo) int {
	seen := map[string]bool{}
	for _, b := range brokers {
		seen[b.rack] = true
	}
	return len(seen)
}
