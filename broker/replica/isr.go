package replica

import (
	"slices"
	"time"
)

// Follower is what a leader knows of one follower of a partition, from
// its fetches (Kafka's Replica.ReplicaState).
type Follower struct {
	// LEO is the follower's log end offset, its last fetch offset; -1
	// until it fetched in the current leader epoch.
	LEO int64
	// LastCaughtUp is the last time the follower had caught up with the
	// leader's log end offset (as of its fetch, or of its previous one).
	LastCaughtUp time.Time
	// lastFetch is the time of its last fetch and lastFetchLeaderLEO the
	// leader's log end offset then.
	lastFetch          time.Time
	lastFetchLeaderLEO int64
}

// LeaderState is a partition leader's view of its ISR and followers, and
// the rules that move its high watermark and its ISR (Kafka's
// Partition.maybeIncrementLeaderHW, getOutOfSyncReplicas and
// isFollowerInSync). It does no IO and reads no clock: times are passed
// in. Not safe for concurrent use (the partition's mutex guards it).
type LeaderState struct {
	// Self is the leader's broker id.
	Self int32
	// ISR is the committed ISR (the state znode's).
	ISR []int32
	// Pending is an ISR sent to the controller and not yet answered
	// (nil: none). Invariant: while an expansion is pending the
	// high watermark waits for the added members too; while a shrink is
	// pending it still waits for the removed ones (Kafka's maximal ISR).
	Pending []int32
	// Followers are the other replicas, by broker id.
	Followers map[int32]*Follower
	// HW is the high watermark. Invariant: never decreases while this
	// broker leads (Advance only raises it).
	HW int64
	// EpochStart is where the current leader epoch starts in the log: a
	// follower joins the ISR only once it has reached it.
	EpochStart int64
}

// NewLeaderState is the state of a broker that became leader at now, its
// log ending at leo, with replicas and isr from the state znode, and hw
// its high watermark so far. The followers in the ISR count as caught up
// now; their log end offsets are unknown until they fetch (Kafka's
// Replica.resetReplicaState for a new leader).
func NewLeaderState(self int32, replicas, isr []int32, hw, leo int64, now time.Time) *LeaderState {
	s := &LeaderState{Self: self, ISR: slices.Clone(isr), Followers: map[int32]*Follower{}, HW: hw, EpochStart: leo}
	for _, r := range replicas {
		if r == self {
			continue
		}
		f := &Follower{LEO: -1, lastFetchLeaderLEO: -1}
		if slices.Contains(isr, r) {
			f.LastCaughtUp = now
		}
		s.Followers[r] = f
	}
	return s
}

// SetReplicas makes replicas the partition's assignment in the same
// leader epoch (Kafka's Partition.makeLeader updates the assignment on
// every LeaderAndIsr, a new epoch or not): a follower added is unknown
// until it fetches, as in NewLeaderState; a follower removed is
// forgotten; the others keep what their fetches told.
func (s *LeaderState) SetReplicas(replicas []int32) {
	for id := range s.Followers {
		if !slices.Contains(replicas, id) {
			delete(s.Followers, id)
		}
	}
	for _, r := range replicas {
		if r != s.Self && s.Followers[r] == nil {
			s.Followers[r] = &Follower{LEO: -1, lastFetchLeaderLEO: -1}
		}
	}
}

// The maximal ISR, the one the high watermark waits for, is the committed
// ISR and the pending one together; it is walked in place (ISR, then
// Pending), without building it, since Advance runs on every append.

// InMaximalISR reports whether id counts for the high watermark.
func (s *LeaderState) InMaximalISR(id int32) bool {
	return slices.Contains(s.ISR, id) || slices.Contains(s.Pending, id)
}

// UpdateFollower records a fetch of follower id at fetchOffset at now,
// when the leader's log ended at leaderLEO (Kafka's
// Replica.updateFetchState): a fetch at the leader's log end means caught
// up now; a fetch at or past the leader's end at the previous fetch means
// it was caught up at the previous fetch. It reports false for a broker
// that is not a follower of the partition.
func (s *LeaderState) UpdateFollower(id int32, fetchOffset, leaderLEO int64, now time.Time) bool {
	f, ok := s.Followers[id]
	if !ok {
		return false
	}
	switch {
	case fetchOffset >= leaderLEO:
		f.LastCaughtUp = later(f.LastCaughtUp, now)
	case fetchOffset >= f.lastFetchLeaderLEO && f.lastFetchLeaderLEO >= 0:
		f.LastCaughtUp = later(f.LastCaughtUp, f.lastFetch)
	}
	f.LEO, f.lastFetch, f.lastFetchLeaderLEO = fetchOffset, now, leaderLEO
	return true
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Advance raises the high watermark to the smallest log end offset of the
// maximal ISR (the leader's own, leaderLEO, included) if that is higher,
// and reports whether it moved. A member whose offset is unknown (it has
// not fetched since this broker became leader) holds it where it is.
func (s *LeaderState) Advance(leaderLEO int64) bool {
	hw := leaderLEO
	for _, set := range [2][]int32{s.ISR, s.Pending} { // a member in both counts once: min
		for _, r := range set {
			if r == s.Self {
				continue
			}
			f := s.Followers[r]
			if f == nil {
				continue // not a replica (a stale ISR); Kafka ignores it too
			}
			hw = min(hw, f.LEO)
		}
	}
	if hw > s.HW {
		s.HW = hw
		return true
	}
	return false
}

// OutOfSync is the ISR members that have not caught up within lag of now
// (Kafka's getOutOfSyncReplicas): the ISR to propose is the ISR without
// them. The leader never is one.
func (s *LeaderState) OutOfSync(now time.Time, lag time.Duration) []int32 {
	var out []int32
	for _, r := range s.ISR {
		if r == s.Self {
			continue
		}
		if f := s.Followers[r]; f == nil || now.Sub(f.LastCaughtUp) > lag {
			out = append(out, r)
		}
	}
	return out
}

// MayJoin reports whether follower id, outside the ISR, may join it
// after its own fetch: its log reaches the high watermark and the
// current epoch's start (Kafka's isFollowerInSync, asked by
// maybeExpandIsr for the replica that fetched only). It is asked for the
// follower that fetched and no other: a follower that stopped fetching
// keeps the log end offset of its last fetch, and when the leader's log
// has not moved since (producers stalled behind the very ISR shrink that
// took it out), that stale offset still equals the high watermark — the
// follower would rejoin at once and leave again a check later.
func (s *LeaderState) MayJoin(id int32) bool {
	f, ok := s.Followers[id]
	return ok && !slices.Contains(s.ISR, id) && f.LEO >= 0 && f.LEO >= s.HW && f.LEO >= s.EpochStart
}
