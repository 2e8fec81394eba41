package replica

// The truncation rules of KIP-101 and KIP-320: how a leader tells a
// follower that its log diverged, and where the follower cuts its log.
// Pure functions over the epoch cache; the partition does the IO.

// Diverging is the leader's check of a follower's fetch (Kafka's
// Partition.fetchRecords with lastFetchedEpoch, v12+): the follower's
// last batch was written in lastFetchedEpoch and its log ends at
// fetchOffset. The leader looks up where that epoch ends in its own log
// (leo its log end); if it knows a smaller epoch only, or the epoch ends
// before fetchOffset, the logs diverged and the follower must truncate:
// diverged reports it, with the DivergingEpoch to answer. A
// lastFetchedEpoch of Undefined is not checked.
func Diverging(c *EpochCache, lastFetchedEpoch int32, fetchOffset, leo int64) (epoch int32, endOffset int64, diverged bool) {
	if lastFetchedEpoch == Undefined {
		return Undefined, Undefined, false
	}
	epoch, endOffset = c.EndOffsetFor(lastFetchedEpoch, leo)
	if epoch < lastFetchedEpoch || endOffset < fetchOffset {
		return epoch, endOffset, true
	}
	return Undefined, Undefined, false
}

// TruncationOffset is where a follower cuts its log after the leader
// answered DivergingEpoch (leaderEpoch, leaderEnd) (Kafka's
// AbstractFetcherThread.getOffsetTruncationState): leo is the follower's
// log end and hw its high watermark. complete is false when the follower
// does not know leaderEpoch: it cuts to the end of its largest epoch below
// it and fetches again, so the leader answers once more for the epoch
// before.
func TruncationOffset(c *EpochCache, leaderEpoch int32, leaderEnd, leo, hw int64) (offset int64, complete bool) {
	switch {
	case leaderEnd == Undefined:
		return min(hw, leo), true
	case leaderEpoch == Undefined:
		return min(leaderEnd, leo), true
	}
	epoch, end := c.EndOffsetFor(leaderEpoch, leo)
	switch {
	case epoch == Undefined:
		// The follower has no epoch at or below the leader's: it kept no
		// epochs then; the leader's end is safe.
		return min(leaderEnd, leo), true
	case epoch != leaderEpoch:
		return min(end, leo), false
	default:
		return min(end, leaderEnd, leo), true
	}
}

// OutOfRange is what a follower does when the leader answered
// OFFSET_OUT_OF_RANGE to a fetch at its log end leo (Kafka's
// AbstractFetcherThread.fetchOffsetAndTruncate): when it is ahead of the
// leader's log end (after an unclean election) it truncates to it
// (truncateTo >= 0); when it is behind the leader's log start it empties
// its log and starts at the leader's start (startAt >= 0). Either is -1
// when not needed. fetchAt is where it fetches next.
func OutOfRange(leo, leaderStart, leaderEnd int64) (truncateTo, startAt, fetchAt int64) {
	if leaderEnd < leo {
		return leaderEnd, -1, leaderEnd
	}
	if leaderStart > leo {
		return -1, leaderStart, leaderStart
	}
	return -1, -1, leo
}
