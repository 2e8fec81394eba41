// Package replica is the broker's replica manager, growing out of
// package broker: what a replica keeps beside its segment log. Today it
// holds the leader epoch cache; the high watermark, the follower fetchers
// and producer state move here as replication lands.
//
// # leader-epoch-checkpoint
//
// Each partition directory holds Kafka's leader-epoch-checkpoint: the
// first offset written under each leader epoch (KIP-101), which lets a
// replica or a consumer find where its log diverged from the leader's
// (OffsetForLeaderEpoch). The file is Kafka's CheckpointFile text:
//
//	0                 version
//	2                 number of entries
//	0 0               epoch startOffset, epochs and offsets increasing
//	3 1520
//
// It is rewritten whole: a temporary file, fsync, rename, fsync of the
// directory, so a crash leaves the old or the new file.
//
// # Invariants
//
//   - Entries are strictly increasing in both epoch and start offset; an
//     Assign that would break this is ignored (an older epoch) or replaces
//     the entries it overlaps (the same offset under a newer epoch), as
//     Kafka's LeaderEpochFileCache.assign does.
package replica
