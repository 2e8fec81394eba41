package controller

import "slices"

// NoLeader is the leader of a partition none of whose eligible replicas is
// live (Kafka's LeaderAndIsr.NoLeader).
const NoLeader int32 = -1

// LeaderAndISR is a partition's leadership, as the controller writes it to
// /brokers/topics/{t}/partitions/{p}/state.
type LeaderAndISR struct {
	Leader          int32
	LeaderEpoch     int32
	ISR             []int32
	ControllerEpoch int32
}

// NewPartitionState is the leadership of a partition that has none yet
// (Kafka's NewPartition → OnlinePartition): the first live replica in
// assignment order leads at leader epoch 0. The ISR is every live replica
// when followers replicate (isrIsLive) and the leader alone otherwise. ok
// is false when no replica is live: the partition stays without a state,
// as Kafka leaves it in NewPartition.
func NewPartitionState(replicas []int32, live func(int32) bool, isrIsLive bool, controllerEpoch int32) (s LeaderAndISR, ok bool) {
	var liveReplicas []int32
	for _, r := range replicas {
		if live(r) {
			liveReplicas = append(liveReplicas, r)
		}
	}
	if len(liveReplicas) == 0 {
		return LeaderAndISR{}, false
	}
	isr := liveReplicas
	if !isrIsLive {
		isr = liveReplicas[:1]
	}
	return LeaderAndISR{Leader: liveReplicas[0], ISR: slices.Clone(isr), ControllerEpoch: controllerEpoch}, true
}

// electOffline elects a leader for a partition whose leader is not live
// (Kafka's offlinePartitionLeaderElection): the first replica in
// assignment order that is live and in the ISR; with unclean election,
// failing that, the first live replica, which then is the ISR alone. The
// new ISR keeps the live members only. ok is false when nobody is
// eligible; the partition then keeps its state.
func electOffline(replicas []int32, cur LeaderAndISR, live func(int32) bool, unclean bool) (LeaderAndISR, bool) {
	for _, r := range replicas {
		if live(r) && slices.Contains(cur.ISR, r) {
			isr := slices.DeleteFunc(slices.Clone(cur.ISR), func(id int32) bool { return !live(id) })
			return LeaderAndISR{Leader: r, LeaderEpoch: cur.LeaderEpoch + 1, ISR: isr}, true
		}
	}
	if unclean {
		for _, r := range replicas {
			if live(r) {
				return LeaderAndISR{Leader: r, LeaderEpoch: cur.LeaderEpoch + 1, ISR: []int32{r}}, true
			}
		}
	}
	return LeaderAndISR{}, false
}

// removeReplica takes a replica that went offline out of a partition's
// leadership (Kafka's doRemoveReplicasFromIsr): it no longer leads, and it
// leaves the ISR unless it is the last member — the last member stays, so
// that it can lead again cleanly when it returns. ok is false when
// nothing changes.
func removeReplica(cur LeaderAndISR, replica int32) (LeaderAndISR, bool) {
	if cur.Leader != replica && !slices.Contains(cur.ISR, replica) {
		return cur, false
	}
	next := LeaderAndISR{Leader: cur.Leader, LeaderEpoch: cur.LeaderEpoch + 1, ISR: slices.Clone(cur.ISR)}
	if next.Leader == replica {
		next.Leader = NoLeader
	}
	if len(next.ISR) > 1 {
		next.ISR = slices.DeleteFunc(next.ISR, func(id int32) bool { return id == replica })
	}
	return next, true
}
