// Package segment is the append-only segment log that zkafka's Kafka
// partitions keep their records in and the ZooKeeper quorum keeps its raft
// log in.
//
// # Entries
//
// Every entry is a Kafka record batch v2, so a partition's .log files are
// byte for byte what Kafka writes, and a fetch can sendfile ranges of them
// straight to the client. All fields are big-endian:
//
//	 0  baseOffset            int64   assigned by Append (not covered by the CRC)
//	 8  batchLength           int32   bytes after this field = len(batch) - 12
//	12  partitionLeaderEpoch  int32
//	16  magic                 int8    always 2
//	17  crc                   uint32  CRC-32C (Castagnoli) of bytes 21..end
//	21  attributes            int16
//	23  lastOffsetDelta       int32   the batch covers baseOffset..baseOffset+lastOffsetDelta
//	27  firstTimestamp        int64
//	35  maxTimestamp          int64   what the time index and retention use
//	43  producerId            int64
//	51  producerEpoch         int16
//	53  baseSequence          int32
//	57  recordCount           int32
//	61  payload               (Kafka records; for the raft log, AppendBatch's opaque payload)
//
// The log reads only baseOffset, batchLength, magic, crc, lastOffsetDelta and
// maxTimestamp; the rest is the producer's (or AppendBatch's).
//
// # Files
//
//	dir/
//	  00000000000000000000.log        batches with offsets [0, 1337)
//	  00000000000000000000.index      sparse offset index
//	  00000000000000000000.timeindex  time index
//	  00000000000000001337.log        the active segment: appends go here
//	  00000000000000001337.index
//	  00000000000000001337.timeindex
//	  00000000000000001337.txnindex   aborted transactions (txnindex.go), once one is
//	  log-start-offset                the start offset set by SetStartOffset ("1200\n")
//	  00000000000000000000.log.cleaned  a rewrite in progress (clean.go), with
//	  00000000000000000000.swap         .index.cleaned, .timeindex.cleaned and
//	                                    the committed swap of [0, end)
//
// A segment is named by its base offset, in 20 decimal digits; the segment
// holding offset N is the one with the largest base offset <= N (binary
// search). The indexes are Kafka's:
//
//	.index      entries of 8 bytes:  relativeOffset int32 | position int32
//	            the batch starting at position has last offset base+relativeOffset;
//	            one entry each time more than IndexIntervalBytes were appended
//	.timeindex  entries of 12 bytes: timestamp int64 | relativeOffset int32
//	            no batch up to base+relativeOffset has a maxTimestamp above
//	            timestamp; timestamps strictly increase
//
// # Invariants
//
//   - Offsets strictly increase through the log, with gaps once a cleaner
//     has rewritten segments (compacted topics); a segment's base offset
//     is at most the base offset of its first batch (equal unless
//     rewritten; NextOffset if it is empty), and a rewritten segment may be
//     empty. A read of an offset in a gap returns the next batch above it,
//     so consumers and followers fetching a cleaned range simply continue.
//   - Every segment but the last is fsynced (log and indexes) before the next
//     is created. So recovery verifies only the last segment batch by batch
//     (length, magic 2, CRC-32C, increasing offsets) and truncates it at the
//     first bad batch; for the others it checks the last index entry against
//     the log, rebuilds missing or inconsistent indexes, and reports a bad
//     batch there as a *CorruptError, since it cannot be a torn write.
//   - Readers see only whole batches: a segment's committed size is
//     published after the write, and NextOffset after that.
//   - Index entries are kept in memory and written to the files on Roll and
//     Close; Sync fsyncs only the active .log, whose indexes Open rebuilds.
//     Abandon closes as a killed process leaves the files (no index write,
//     trim or fsync), for a harness's kill -9 (broker.Kill).
//   - StartOffset >= the first segment's base offset; it is persisted before
//     segments below it are deleted.
//
// # Concurrency
//
// One writer at a time: Append, Truncate, Roll, SetStartOffset,
// EnforceRetention and Close serialize on a mutex, and Sync runs its fsync
// without it. With Options.WritebackBytes the appender also starts
// the disk writes of what it appended, from a short-lived goroutine (at
// most one per log), so that the fsync of the Append that rolls does not
// wait for a whole segment. Readers (Read, ReadBatches, OffsetForTime, NextOffset,
// StartOffset, Size) take no log-wide lock: they load an immutable segment
// list from an atomic pointer and hold a reference on the segment they
// read, so a FileRange stays readable after retention or truncation deleted
// its segment, until FileRange.Release.
//
// # Usage
//
//	l, err := segment.Open(dir, segment.Options{})
//	off, err := l.Append(batch, count, maxTimestamp) // batch from the producer
//	err = l.Sync()                                   // before acknowledging, if durability is wanted
//	r, err := l.Read(fetchOffset, maxBytes)
//	_, err = r.WriteTo(conn)                         // sendfile
//	r.Release()
package segment
