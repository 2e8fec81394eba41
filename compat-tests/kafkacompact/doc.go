// Package kafkacompact tests log compaction (cleanup.policy=compact)
// through franz-go and kcat against an in-process broker: the latest value
// per key after cleaning, tombstones expiring, keyless records and unknown
// policies refused, a corrupt segment making its partition uncleanable,
// and an idempotent producer going on through cleanings and restarts.
package kafkacompact
