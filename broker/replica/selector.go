package replica

import "time"

// ReplicaView is one replica of a partition as the leader sees it when a
// consumer that names its rack fetches (Kafka's ReplicaView): the broker,
// its rack ("" for none, or when the broker has no endpoint on the
// consumer's listener), its log end offset and how long ago it last
// caught up with the leader.
type ReplicaView struct {
	ID            int32
	Rack          string
	LEO           int64
	SinceCaughtUp time.Duration
}

// SelectRackAware is Kafka's RackAwareReplicaSelector (KIP-392): without
// a client rack, or without a replica in it, the leader; the leader if it
// is in the client's rack; else the most caught-up replica in that rack —
// the largest log end offset, then the most recently caught up, then (a
// tie Kafka leaves to a hash set's order) the lowest broker id. replicas
// are the candidates the leader vetted (in the ISR, holding the fetch
// offset); leader is the leader's own view.
func SelectRackAware(clientRack string, leader ReplicaView, replicas []ReplicaView) int32 {
	if clientRack == "" || leader.Rack == clientRack {
		return leader.ID
	}
	best := -1
	for i, r := range replicas {
		if r.Rack != clientRack {
			continue
		}
		if best < 0 || better(r, replicas[best]) {
			best = i
		}
	}
	if best < 0 {
		return leader.ID
	}
	return replicas[best].ID
}

// better is Kafka's ReplicaView.comparator (larger is better), with the
// broker id as the last tie-break.
func better(a, b ReplicaView) bool {
	if a.LEO != b.LEO {
		return a.LEO > b.LEO
	}
	if a.SinceCaughtUp != b.SinceCaughtUp {
		return a.SinceCaughtUp < b.SinceCaughtUp
	}
	return a.ID < b.ID
}
