package broker

import (
	"slices"
	"time"

	"github.com/zkafka/zkafka/broker/replica"
	"github.com/zkafka/zkafka/kproto"
)

// Fetch from the closest replica (KIP-392), Kafka's rules:
//
//   - a consumer's Fetch of v11+ may be served by any replica, not only
//     the leader (Kafka's fetchOnlyFromLeader is false once the request
//     carries client metadata, v11): a follower reads its own log up to
//     its own high watermark, which the leader's fetch answers move
//     (partition_replica.go's Append). An offset between that high
//     watermark and the follower's log end gets an empty answer (the long
//     poll waits for the high watermark), one past the log end
//     OFFSET_OUT_OF_RANGE, after which clients go back to the leader;
//     the leader epoch is checked against the follower's as the leader's
//     (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH);
//   - with replica.selector.class=RackAwareReplicaSelector, the leader
//     answers a consumer fetch that names a rack (rack_id) with the
//     preferred read replica (replica.SelectRackAware) when that is not
//     the leader itself: no records, the offsets as usual, and at once.
//     The candidates are the ISR members whose log holds the fetch offset
//     (log start <= offset <= log end, from their fetches) and whose
//     broker is live with an endpoint on the consumer's listener (Kafka's
//     getPartitionReplicaEndpoints), as ReplicaManager.findPreferredReadReplica;
//   - replica fetches (replica_id >= 0), ListOffsets and Metadata are
//     unchanged: leaders only.

// readableReplica is the local replica of partition p that a fetch may
// read: the one led, else, for a consumer fetch of v11+, a follower.
func readableReplica(req *kproto.FetchRequest, t *topic, p int32) *partition {
	if part := t.partition(p); part != nil || req.ReplicaID >= 0 || req.Version < 11 {
		return part
	}
	return t.replica(p)
}

// preferredReadReplica is the replica a consumer fetch at offset should
// go to instead of this leader, or -1 (read here).
func (c *conn) preferredReadReplica(req *kproto.FetchRequest, part *partition, offset int64) int32 {
	if req.ReplicaID >= 0 || req.Version < 11 || req.RackID == "" ||
		c.b.cfg.Replication.ReplicaSelector != RackAwareReplicaSelector {
		return -1
	}
	rackOf := func(id int32) (string, bool) {
		br, ok := c.b.meta.broker(id)
		if _, on := br.endpoints[c.listener]; !ok || !on {
			return "", false
		}
		return br.rack, true
	}
	leader, candidates, ok := part.readReplicaViews(offset, time.Now(), rackOf)
	if !ok {
		return -1
	}
	if id := replica.SelectRackAware(req.RackID, leader, candidates); id != leader.ID {
		return id
	}
	return -1
}

// readReplicaViews is the leader's view of itself and of the followers a
// consumer at offset could read from: in the ISR, offset within their
// log, and reachable (rackOf ok). ok is false when this broker does not
// lead the partition. rackOf is called without p.mu.
func (p *partition) readReplicaViews(offset int64, now time.Time, rackOf func(int32) (string, bool)) (leader replica.ReplicaView, out []replica.ReplicaView, ok bool) {
	p.mu.Lock()
	ls := p.mu.leader
	if p.mu.role != roleLeader || ls == nil {
		p.mu.Unlock()
		return leader, nil, false
	}
	leader = replica.ReplicaView{ID: p.self, LEO: p.log.NextOffset()}
	for id, f := range ls.Followers {
		start, known := p.mu.followerStarts[id]
		if slices.Contains(p.mu.isr, id) && f.LEO >= offset && (!known || start <= offset) {
			out = append(out, replica.ReplicaView{ID: id, LEO: f.LEO, SinceCaughtUp: now.Sub(f.LastCaughtUp)})
		}
	}
	p.mu.Unlock()
	leader.Rack, _ = rackOf(p.self)
	reachable := out[:0]
	for _, v := range out {
		var ok bool
		if v.Rack, ok = rackOf(v.ID); ok {
			reachable = append(reachable, v)
		}
	}
	return leader, reachable, true
}
