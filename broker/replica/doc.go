// Package replica is the broker's replica manager, grown out of package
// broker: what a replica keeps beside its segment log, the rules of
// replication, and the follower fetchers. Package broker's partition
// (partition_replica.go) applies these rules under its mutex; this
// package does no partition IO itself except the checkpoint files and the
// fetchers' requests.
//
//	epochcache.go    the leader epoch cache (leader-epoch-checkpoint)
//	isr.go           LeaderState: a leader's ISR, followers and high watermark rules
//	truncate.go      the divergence check (leader) and truncation rules (follower)
//	fetcher.go       Fetchers: one goroutine per leader broker, kgo Fetch v13 requests
//	hwcheckpoint.go  replication-offset-checkpoint, the high watermarks of a log dir
//	selector.go      RackAwareReplicaSelector (KIP-392): the preferred read replica
//	quota.go         replication quotas (KIP-73): Kafka's SimpleRate meter, the bound,
//	                 the throttled-replicas lists
//
// # Roles
//
// A broker holds a replica of every partition whose assignment names it
// (once the partition has a state znode). Its role comes from the state
// znode, applied by broker's applyTopic only (the state watch, the
// controller's own writes, later LeaderAndIsr):
//
//	                 state: leader = me, epoch E
//	    ┌──────────────────────────────────────────────┐
//	    │                                              ▼
//	 (none) ── leader = X ≠ me ──► follower of X ──► leader in epoch E
//	leader -1                      in epoch E        (epoch cache: E starts at
//	    ▲                          fetches from X     the log end; followers'
//	    │                          (Fetchers)         positions unknown)
//	    │                              ▲                   │
//	    └──── leader -1 ───────────────┼───────────────────┤
//	                                   └── leader = X ≠ me ┘
//	                                       (stops serving; acks=all waits
//	                                        answer NOT_LEADER_OR_FOLLOWER)
//
// A new epoch for the same leader (the controller removed a dead broker
// from the ISR) starts the leader state afresh; the same epoch with a
// newer state znode version only takes the new ISR (an AlterPartition
// answer seen through the watch).
//
// # High watermark
//
// On a leader: the smallest log end offset over the maximal ISR (the
// committed ISR plus a pending change's members, the leader's own log end
// included), raised only (LeaderState.Advance). A follower that has not
// fetched since the leader took its epoch holds it. On a follower:
// min(the leader's high watermark in the last answer, its own log end).
// Consumers read up to it; followers up to the leader's log end. At start
// it is read from replication-offset-checkpoint (0 when absent), written
// every replica.high.watermark.checkpoint.interval.ms and at shutdown:
//
//	0                 version
//	2                 number of entries
//	t 0 1520          topic partition offset
//	t 1 98
//
// # ISR
//
// A follower is caught up at a fetch at the leader's log end, and as of
// its previous fetch when it fetches at or past where the leader's log
// ended then (Kafka's Replica.updateFetchState). An ISR member not caught
// up within replica.lag.time.max.ms leaves (checked every half of it, so
// within 1.5 times the lag of its last fetch); a follower outside whose
// log end reaches the high watermark and the current epoch's start joins,
// decided at its own fetch only (MayJoin: the offset of one that stopped
// fetching is stale, and may equal a high watermark that stalled with
// it). Unlike Kafka, a follower whose log end equals the leader's but
// that stopped fetching still leaves (Kafka keeps it until the leader's
// log moves: Replica.isCaughtUp). Both go to the controller as AlterPartition
// proposals (one pending at a time); the partition takes the answer (or
// the state znode) as its committed ISR.
//
// # Truncation (KIP-101, KIP-320)
//
// A follower fetches with last_fetched_epoch, the epoch of its last batch
// (the epoch cache's latest). The leader looks that epoch up in its own
// cache: a smaller epoch only, or an end before the fetch offset, is a
// divergence, answered with DivergingEpoch {epoch, end offset} and no
// records. The follower cuts its log to min(its own end of that epoch,
// the leader's end, its log end) — to its largest smaller epoch's end
// when it does not know the epoch, asking again — rebuilds its producer
// state from the log and fetches on. OFFSET_OUT_OF_RANGE: a follower past
// the leader's log end truncates to it; one behind the leader's log start
// empties its log and starts there.
//
// # leader-epoch-checkpoint
//
// Each partition directory holds Kafka's leader-epoch-checkpoint: the
// first offset written under each leader epoch. A leader assigns its
// epoch at its log end when it takes it; a follower assigns the partition
// leader epoch of each batch it appends that is newer than its latest.
// The file is Kafka's CheckpointFile text:
//
//	0                 version
//	2                 number of entries
//	0 0               epoch startOffset, epochs and offsets increasing
//	3 1520
//
// Both checkpoint files are rewritten whole: a temporary file, fsync,
// rename, fsync of the directory, so a crash leaves the old or the new one.
//
// # Fetchers
//
// One goroutine per leader broker (the broker's tracked goroutines),
// with a kgo client of the leader's inter-broker listener (TLS with the
// broker's keystore and truststore when that listener is SSL or SASL_SSL,
// the broker's SASL login when it is SASL; Config.ClientOpts): Fetch v13
// (replica_id = this broker, current_leader_epoch, fetch_offset = log
// end, last_fetched_epoch, log_start_offset), long polling
// replica.fetch.wait.max.ms, in an incremental fetch session (KIP-227,
// fetch_session.go): after the first full fetch, a fetch carries only the
// partitions whose fetch fields changed and the ones to forget, and the
// leader answers only the partitions with news. A partition error (NOT_LEADER,
// FENCED/UNKNOWN_LEADER_EPOCH, ...) or a failed request backs off
// replica.fetch.backoff.ms; the new leadership comes through the broker.
// Three differences from Kafka keep a failover from waiting on the
// follower's first fetch (the new leader's high watermark, and every
// acks=all write, wait for it): a partition added while a request is in
// flight cuts that long poll short (its connection is closed);
// NOT_LEADER_OR_FOLLOWER and UNKNOWN_LEADER_EPOCH (the leader has not
// applied its LeaderAndIsr yet) and stale answers are retried after 20 ms,
// ten times in a row at most; and an error to a request built in an older
// epoch, or before the partition was followed anew, delays nothing
// (Kafka's fetcher ignores such answers too).
//
// # Invariants
//
//   - Epoch cache entries are strictly increasing in both epoch and start
//     offset; an Assign that would break this is ignored (an older epoch)
//     or replaces the entries it overlaps, as Kafka's
//     LeaderEpochFileCache.assign does.
//   - A fetcher changes a log only through Local, in the leader epoch its
//     request was built in: a partition that leads, or follows a newer
//     epoch, answers ErrStale and keeps its log. Nothing a follower sends
//     changes the leader's log.
//   - LeaderState.HW never decreases; an ISR never loses the leader.
package replica
