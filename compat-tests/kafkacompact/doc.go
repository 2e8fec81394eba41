// Package kafkacompact tests log compaction (cleanup.policy=compact)
// through franz-go and kcat against an in-process broker: the latest value
// per key after cleaning, tombstones expiring, keyless records and unknown
// policies refused, a corrupt segment making its partition uncleanable,
// an idempotent producer going on through cleanings and restarts, and
// three replicas each cleaning its own log while a follower fetches
// across the leader's cleaned ranges.
package kafkacompact
