// Package broker is the Kafka broker: the listener, one handler per API key,
// partitions on store/segment, the fetch long-poll and the controller. It
// keeps cluster metadata in ZooKeeper, in Apache Kafka's ZooKeeper-mode
// layout, through a real client (github.com/go-zookeeper/zk) and never
// imports quorum. The group coordinator (group_*.go) keeps committed
// offsets, group membership and each group's metadata record in ZooKeeper
// under /consumers; it runs on the leader of the group's partition of
// the internal topic __consumer_offsets (offsets_topic.go), which also
// carries every commit and rebalance in Kafka's record formats.
//
// # Usage
//
//	cfg, err := broker.LoadConfig("server.properties", log) // or broker.DefaultConfig(dir)
//	b, err := broker.New(cfg, log)   // connects to ZooKeeper, loads topics, opens partitions
//	go b.Serve(listener)             // or b.ListenAndServe() (every listener), b.ServeListeners(ls):
//	                                 // registers /brokers/ids/{id}, runs for controller
//	...
//	err = b.Shutdown(ctx)            // controlled shutdown first; Serve returns ErrServerClosed
//
// # Files
//
//	NN_name.go      one file per API key (00_produce.go ... 75_describe_topic_partitions.go), each
//	                opening with its version notes and registering its range (regKey)
//	registry.go     the registry, dispatch rules, ApiVersions' table
//	request_hook.go Config.RequestHook: a test harness's view of each request before its
//	                handler (delay, drop the connection, or answer in its place); nil by default;
//	                interbroker_dial.go Config.InterBrokerDial: a harness's dialer for the
//	                broker's connections to other brokers (one proxy per pair); nil by default
//	server.go       Broker, New/Serve/Shutdown, one accept loop per listener, tracked goroutines;
//	                kill.go Kill, the stop of a killed process (no flush, no checkpoint), and
//	                Config.LogFS, the partition logs' file system (a harness's faultfs)
//	endpoints.go    the listeners registered in /brokers/ids, each client answered with its own
//	config_tls.go   listener.security.protocol.map and ssl.*; config_listener_ssl.go the
//	                listener.name.x.ssl.* overrides; tls.go each SSL listener's tls.Config;
//	                keystores and truststores (JKS, PKCS12, PEM files, inline PEM) through
//	                internal/keystore; tls_ciphers.go ssl.cipher.suites' Java names
//	sasl*.go        the SASL_PLAINTEXT and SASL_SSL listeners: sasl.go what each offers,
//	                sasl_conn.go the authentication of a connection (SaslHandshake,
//	                SaslAuthenticate, KIP-368 re-authentication), sasl_plain.go PLAIN,
//	                sasl_scram.go SCRAM-SHA-256/512 (github.com/xdg-go/scram);
//	                config_sasl.go their keys and the JAAS config (internal/jaas);
//	                interbroker_sasl.go the broker's own login on a SASL inter-broker
//	                listener and the kgo options of all its clients of other brokers
//	scram_store.go  the SCRAM credentials in /config/users, the broker's cache of them
//	quota_*.go      client quotas (keys 48, 49): quota_store.go their znodes in /config/users
//	                and /config/clients (beside the SCRAM keys), quota_entities.go Kafka's
//	                precedence of the eight entity combinations, quota_rate.go the windowed
//	                rate (quota.window.*, config_quota.go), quota_manager.go the meters and
//	                throttle times, quota_conn.go throttle_time_ms in every response and the
//	                muted connection
//	config_zkclient.go  the ZooKeeper session's TLS, SASL and secure ACLs (zookeeper.set.acl,
//	                zookeeper.ssl.*, the JAAS Client section; zkmeta.DialSecure)
//	principal.go    a connection's principal: User:NAME (SASL), the certificate's DN, ANONYMOUS
//	conn.go         the per-connection reader and writer, sendfile;
//	                conn_pipeline.go the handler goroutine of large produce requests
//	request_budget.go  the broker-wide bound on request buffers (queued.max.request.bytes);
//	                request_memory_*.go its buffers, anonymous memory outside the Go heap
//	partition.go    a partition: segment log, serialized appends, fetch waiters, leader epoch
//	fetch_session.go  fetch sessions (KIP-227): the cache and its eviction, what a
//	                session remembers; fetch_session_conn.go the fetch path's side
//	partition_replica.go  its role (leader / follower / none), the leader's ISR and
//	                high watermark, acks=all waits, the follower's appends and truncation
//	replication.go  the replica manager glue: fetchers, the ISR shrink timer, the
//	                high watermark checkpoint; replication_config.go its replica.* keys
//	                (config_interbroker.go: the inter-broker listener)
//	alter_partition.go  the leader's AlterPartition sender (56_alter_partition.go: the
//	                controller's handler)
//	replica/        package replica: leader epoch cache, ISR and high watermark rules,
//	                truncation rules, follower fetchers, replication-offset-checkpoint,
//	                the rack-aware replica selector and the replication quotas
//	fetch_replica.go  fetch from the closest replica (KIP-392): consumer fetches served by
//	                followers, the leader's preferred read replica (replica.selector.class)
//	throttle.go     the replication throttles (KIP-73): leader/follower rates and
//	                throttled replicas
//	producers.go    idempotent producer sequence tracking
//	partition_txn.go  transactions on a partition: open transactions, COMMIT/ABORT
//	                markers (27_write_txn_markers.go writes them), the last stable
//	                offset, the aborted index (store/segment's .txnindex);
//	                partition_txn_fetch.go read_committed reads, partition_txn_produce.go
//	                transactional produce, partition_txn_verify.go and
//	                txn_partition_verify.go KIP-890 verification with the coordinator
//	delete_records.go  DeleteRecords on a partition: the leader's log start, the followers'
//	                log starts from their fetches, the low watermark the answer waits for
//	producer_snapshot.go  Kafka's {offset}.snapshot producer state files (roll, clean close)
//	min_isr.go      min.insync.replicas: NOT_ENOUGH_REPLICAS before an acks=all append
//	cluster.go      the broker's view of ZooKeeper: topics and their open partitions
//	metadata_cache.go  what the controller's UpdateMetadata said; Metadata answers from it
//	controller.go   registration, the watches that feed the controller's loop
//	                (package broker/controller: elections, leaders, ISRs, fenced writes,
//	                the requests to the brokers, controlled shutdown, preferred and
//	                unclean elections, reassignments, topic deletion)
//	43_elect_leaders.go, 45_alter_partition_reassignments.go  ElectLeaders,
//	                AlterPartitionReassignments, ListPartitionReassignments (to the
//	                controller's loop); admin_znodes.go the znodes old tools write for them;
//	                config_leader_balance.go auto.leader.rebalance.enable, leader.imbalance.*
//	control_epochs.go  the controller and broker epochs that fence keys 4, 5 and 6
//	shutdown_controlled.go  the broker's controlled shutdown (key 7 to the controller);
//	                config_interbroker.go its keys and inter.broker.listener.name
//	admin.go        topic creation, deletion, partition growth; assign.go replica placement
//	                (Kafka's AdminUtils, rack-aware when the brokers have broker.rack)
//	zkmeta/         package zkmeta: the ZooKeeper session with chroot, znode paths and JSON shapes
//	config.go       Config and server.properties; config_rules.go the rules of its values;
//	                topicconfig.go per-topic configs, topicconfig_alter.go their changes at
//	                run time (keys 33, 44), config_changes.go the /config/changes watch
//	group_*.go      the group coordinator: group_machine.go the pure membership state
//	                machine (group_state.go the join phase, group_sync.go the rest;
//	                scripts in testdata/group), group_shell.go its lock, timers and
//	                replies, group_store.go the offset-commit pipeline, group_mirror.go
//	                /ids and /owners, group_load.go loading a partition's groups
//	                (COORDINATOR_LOAD_IN_PROGRESS), group_expiry.go offset expiry;
//	                group_records.go the group metadata record (/consumers/{g}/group-metadata,
//	                the generation stored before it is answered; members restored on a move)
//	                and the records appended to __consumer_offsets
//	offsets_topic.go  __consumer_offsets: created on the first FindCoordinator, internal,
//	                the coordinator as the leader of partition abs(hash(group)) % N
//	acl_authorizer.go  the ACL authorizer (authorizer.class.name): ACLs in Kafka's znodes,
//	                compare-and-set writes, change notifications followed by every broker;
//	                authz/ (package authz) the pure rules and the cache; config_authz.go its keys
//	acl_apis.go     what CreateAcls / DescribeAcls / DeleteAcls (29_, 30_, 31_) share
//	authorize.go    the handlers' authorization checks (one call near each handler's top);
//	                authorize_apis.go what a refusal answers, per API; principal.go the
//	                connection's principal (User:ANONYMOUS, or the client certificate's DN)
//	metrics*.go     Prometheus metrics with the JMX exporter's names on zkafka.metrics.port
//	                (metrics.go the request-path counters, metrics_state.go the gauges,
//	                metrics_http.go the key, /healthz and /readyz)
//	cleaner*.go     the log cleaner of compacted topics (store/compact), its
//	                checkpoint and log.cleaner.* keys; retention.go deletes by age/size
//
// # Connection model
//
// Each connection has a reader goroutine and a writer goroutine, both
// started through Broker.goTracked (an internal/tracked Group: it refuses
// new goroutines once Shutdown began; pprof label "zkafka"). Serve's
// accept loop is internal/accept's, which retries EMFILE and the like. The reader reads
// a frame (capped by socket.request.max.bytes), parses the header, and
// runs the handler to completion before reading the next request, as
// Kafka does (it mutes a channel while a request is in flight). When no
// response is queued before it, the reader writes the response itself if
// it is small (up to 16 KiB, no records from a file) or no request waits
// behind it (a consumer's fetch): that saves a hand-off to the writer, a
// thread wake-up that on a loaded machine waits for a time slice (see
// conn.send; the writer's queue count makes sure nothing is overtaken).
// Otherwise the response goes to the writer through a channel, so
// responses leave in request order and the reader already reads the next
// request while the previous response is written. Produce with acks=0
// queues nothing. The request path allocates nothing per produce request
// (the header lives in the conn; pinned over a socket in alloc_test.go).
// A Fetch that parks in its long poll holds only its own connection.
// A produce request of 64 KiB or more goes to a third goroutine of the
// connection, started at the first (conn_pipeline.go), which handles it
// while the reader reads the next request; the reader waits for it before
// it handles that one, so requests are still handled one at a time and
// in order, with one read ahead: a producer with several requests in
// flight gets its bytes received and appended at the same time.
//
// Request memory follows the bytes that arrive, not the size a prefix
// claims. Each connection keeps a 64 KiB buffer for small requests; a
// larger request grows it as its bytes arrive (kproto.ReadFrameBody: to
// twice what was read), each step a buffer taken from the broker's
// request budget, which bounds all of them together
// (queued.max.request.bytes, 100 MiB by default; Kafka's default is
// unbounded). The budget's buffers are anonymous mappings outside the Go
// heap, pooled for reuse and unmapped when idle. A connection whose next
// step does not fit waits and reads nothing meanwhile (backpressure); if
// the budget stays stuck for a second, the connection reading a request
// with the most bytes is closed. A grown buffer is kept for the next
// requests (up to 16 MiB) and given back after 2 s idle.
//
//	client ──► reader: ReadFrame ─ ParseRequestHeader ─ dispatch ─ handler ──► out chan ──► writer ──► client
//	                                                                     (*response: buf + holes + FileRanges)
//	                                                     └─ nothing queued, small or nothing behind ─► client
//
// The writer batches small responses in a bufio.Writer and flushes when
// its queue is empty. A fetch response is a buffer with holes: the writer
// flushes the bytes before a hole and sends the hole's records from the
// segment file with sendfile(2) (segment.FileRange.WriteTo on the TCP
// socket), so record bytes never pass through user space on the fetch
// path (copiedRecordBytes counts any fallback copy; tests assert 0). On an
// SSL listener's connection sendfile cannot encrypt: the hole's records
// are read from the file into a pooled 64 KiB buffer and written through
// the TLS connection (conn.copyRecords), counted as copied.
//
// Closing rules: a frame with a negative or oversized size (the log line
// names the size and socket.request.max.bytes), a truncated
// header, an unknown API key, a version outside a key's range (except
// ApiVersions, which gets the v0-shaped UNSUPPORTED_VERSION reply and
// stays open), an undecodable body, or a failed acks=0 produce closes
// that connection only, with a log line. Each goroutine has a last-resort
// recover that logs the stack and closes the connection; client bytes
// never panic the process.
//
// # Invariants
//
//   - Appends to a partition are serialized by partition.mu; validation
//     (CRC, decompression) runs before it, on the goroutine handling the
//     request, or for a large produce on the reader while the handler
//     goroutine appends the request before it (conn_pipeline.go).
//   - The batch bytes appended are the producer's bytes; only base offset,
//     partition leader epoch (the state znode's leader_epoch this broker
//     leads in, recorded in leader-epoch-checkpoint by broker/replica when
//     it becomes leader) and, for LogAppendTime topics, max
//     timestamp + attributes + CRC are rewritten in place.
//   - current_leader_epoch in Fetch, ListOffsets and OffsetForLeaderEpoch
//     below the partition's is FENCED_LEADER_EPOCH, above it
//     UNKNOWN_LEADER_EPOCH.
//   - Every broker in a partition's assignment holds a replica once the
//     partition has a state znode; applyTopic is the one place that gives
//     it its role (leader, follower of X in epoch E, none). topic.partition
//     returns only the partitions this broker leads: produce, consumer
//     fetch, ListOffsets and OffsetForLeaderEpoch are served from leaders
//     only (NOT_LEADER_OR_FOLLOWER elsewhere), and appendBatch re-checks the
//     role under partition.mu.
//   - High watermark = the smallest log end offset of the ISR on a leader
//     (broker/replica), raised only; consumers read up to it
//     (read_committed: up to the last stable offset, min(first offset of
//     an open or not yet replicated transaction, high watermark)),
//     followers to the log end. acks=1 answers
//     after the leader's append, acks=-1 when the high watermark passes
//     the batch (or times out, or the ISR is below min.insync.replicas);
//     fsync follows flush.messages / flush.ms (log.flush.interval.*), as
//     in Kafka.
//   - A parked fetch (or acks=all produce) registers on each partition's
//     waiter list before it re-checks the high watermark (a follower's
//     fetch: the log end), so a change in between is not lost; appends,
//     high watermark moves, ISR and role changes signal every waiter (no
//     polling loops).
//   - A *topic in the cache is immutable; changes publish a new one.
//     cluster.applyMu serializes opening/closing partitions.
//   - Controller writes are ZooKeeper multis whose first op checks
//     /controller_epoch's version (the one this broker set when it won
//     /controller), so a deposed controller cannot overwrite its successor.
//     The partition states are written by broker/controller's loop only,
//     except a new topic's, which the controller's CreateTopics writes in
//     the topic's own multi.
//   - A SASL listener's connection is served nothing but ApiVersions,
//     SaslHandshake and SaslAuthenticate before it authenticated, and
//     nothing after its session expired (connections.max.reauth.ms)
//     unless it re-authenticated (sasl_conn.go).
//   - A partition is open on a broker iff the broker is in its assignment
//     and it has a state znode; its role (leader, follower of X in epoch
//     E) changes in place. The controller writes a state before it sends
//     LeaderAndIsr to the partition's replicas, which re-read the topic
//     (04_leader_and_isr.go); brokers watch no state znode.
//   - Metadata and DescribeCluster answer from the metadata cache, which
//     only UpdateMetadata changes: every broker tells the controller's
//     view. CreateTopics, CreatePartitions and DeleteTopics answer once
//     the cache shows the change (bounded by timeout_ms); DeleteTopics once
//     the controller deleted the topic's znodes, which it does when every
//     replica answered StopReplica with delete (a replica on a broker that
//     is down makes it time out; the deletion completes when it returns).
//   - A controller request whose controller_epoch is below the newest seen,
//     or whose broker_epoch is below this broker's registration, changes
//     nothing (STALE_CONTROLLER_EPOCH, STALE_BROKER_EPOCH).
//
// # ZooKeeper layout
//
// Written as Apache Kafka does in ZooKeeper mode (JSON shapes in zkmeta):
// /cluster/id, /brokers/ids/{id} (ephemeral, version 5),
// /brokers/topics/{t} (version 3, topic_id; adding_replicas and
// removing_replicas during a reassignment), /brokers/topics/{t}/partitions/{p}/state,
// /config/topics/{t}, /config/users/{user} (SCRAM credentials),
// /config/brokers/{id} and /config/brokers/<default> (dynamic broker
// configs), /config/changes,
// /admin/delete_topics/{t}, /admin/preferred_replica_election,
// /admin/reassign_partitions, /controller (ephemeral),
// /controller_epoch, /latest_producer_id_block, and Kafka's other
// top-level paths. zookeeper.connect may carry a chroot, which is
// created if missing. Every broker watches /brokers/ids (the controller's
// input, and where a broker finds the controller's inter-broker
// endpoint), /brokers/topics (topics created by other brokers or tools
// are opened) and /controller; the controller also watches
// /admin/delete_topics, /admin/preferred_replica_election and
// /admin/reassign_partitions (admin_znodes.go). Leadership reaches the brokers in the
// controller's requests (LeaderAndIsr, UpdateMetadata, StopReplica; keys
// 4-6), on the inter-broker listener. With an authorizer:
// /kafka-acl/{Type}/{name}, /kafka-acl-extended/prefixed/{Type}/{name} and
// the notifications under /kafka-acl-changes and
// /kafka-acl-extended-changes (zkmeta/acl.go), which every broker watches.
//
// # Transactions (coordinator)
//
// The transaction coordinator of a transactional id is the leader of its
// partition of __transaction_state (txn_state_topic.go, created on the
// first FindCoordinator key type 1 or transactional InitProducerId). Its
// state machine is pure (package broker/txn: states, transitions, errors,
// timers as an input); the shell (txn_coordinator.go) appends each state
// change as Kafka's TransactionLogKey/Value record to that partition and
// acts only once the high watermark passes it (txn_log.go), loads a
// partition's transactions from its local log when it becomes leader
// (COORDINATOR_LOAD_IN_PROGRESS meanwhile; NOT_COORDINATOR on the old
// leader), and completes PrepareCommit/PrepareAbort by sending
// WriteTxnMarkers to the partitions' leaders until each answered
// (txn_markers.go). Offsets of TxnOffsetCommit wait in ZooKeeper under
// /consumers/{group}/txn-offsets/{producer id} until the marker reaches
// the group's partition of __consumer_offsets (txn_offsets.go). KIP-890
// part 1 (verification) is served; part 2 (an epoch bump per
// transaction, EndTxn v5) is not.
//
// # Shutdown
//
// Shutdown first asks the controller (ControlledShutdown, key 7, on its
// inter-broker listener) to move leadership off this broker and out of
// the ISRs, retrying controlled.shutdown.max.retries times
// controlled.shutdown.retry.backoff.ms apart, within half of Shutdown's
// time; then it closes the listeners. A controller that shuts down
// deletes /controller (fenced by /controller_epoch) before its session
// closes, so that another broker takes over at once.
//
// # Not implemented
//
// KIP-890 part 2, message format down-conversion (magic 0/1 produce gets
// UNSUPPORTED_FOR_MESSAGE_FORMAT), dynamic broker configs other than the
// topic-default log.* keys and the replication throttle rates
// (dynamic_config.go, throttle.go), replica.selector.class other than
// RackAwareReplicaSelector, quotas, SASL GSSAPI and OAUTHBEARER,
// delegation tokens.
package broker
