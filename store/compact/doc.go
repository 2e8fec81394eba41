// Package compact is zkafka's log cleaner for cleanup.policy=compact
// topics, built as Kafka's LogCleaner (core/src/main/scala/kafka/log/
// LogCleaner.scala, LogCleanerManager, OffsetMap): it works on a
// store/segment Log through the log's rewrite API (segment/clean.go, which
// owns the crash-safe swap of .cleaned segments).
//
// # One cleaning
//
//	PlanLog: [start .. FirstDirty)  clean part   (cleaned before)
//	         [FirstDirty .. FirstUncleanable)  dirty part
//	         [FirstUncleanable ..)  active segment, or younger than
//	                                min.compaction.lag.ms: never touched
//	Clean:   1. OffsetMap (MD5 of key -> latest offset) over the dirty part,
//	            as far as log.cleaner.dedupe.buffer.size holds: up to end
//	         2. every closed segment below end, in groups of at most
//	            segment.bytes, rewritten keeping, in offset order and with
//	            offsets unchanged:
//	            - records at offsets >= end;
//	            - the latest record of each key (per the map; keys only in
//	              the clean part are kept); a tombstone (null value) only
//	              until its batch's delete horizon (KIP-534: the first
//	              cleaning that keeps a tombstone sets the horizon to
//	              now + delete.retention.ms in the batch header,
//	              attributes bit 6 and first_timestamp; a later cleaning
//	              after it drops the tombstone);
//	            - keyless records are dropped;
//	            - a batch whose records are all gone is dropped, unless it
//	              is the last batch of an active producer: then an empty
//	              batch with the same offsets, producer id, epoch and
//	              sequence is kept, so the producer's sequence survives;
//	            - a batch keeping all its records is copied as is; other
//	              batches are rebuilt with the same header fields (base
//	              offset, last offset delta, producer fields, codec) and
//	              recompressed with their codec;
//	            - transaction markers stay while data of their transaction
//	              is in the log; then they get a delete horizon and go
//	              after it. The records of aborted transactions (the log's
//	              .txnindex) are left out of the offset map, so they never
//	              shadow a committed record of their key, and removed; their
//	              ABORT marker and its .txnindex entry stay while a cleaning
//	              finds data of the transaction (segment/clean.go keeps the
//	              entries of the markers kept). The broker cleans only below
//	              the last stable offset.
//	         3. the new checkpoint is end (cleaner-offset-checkpoint,
//	            kept by the broker).
//
// Kafka differences: max.compaction.lag.ms is measured from each
// segment's max timestamp (Kafka: the first batch of the first dirty
// segment); legacy (magic 0/1) batches do not exist in zkafka logs.
package compact
