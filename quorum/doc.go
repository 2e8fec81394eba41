// Package quorum is the ZooKeeper server: the client listener, sessions, the
// request pipeline, watches, and replication of every write through
// go.etcd.io/raft/v3 (package raftnode). A standalone server is an ensemble
// of one voter; with server.N lines in zoo.cfg a server is one member of an
// ensemble (participants are raft voters, observers are learners). The data
// tree is store/znode; the wire codecs are zkproto.
//
// # Usage
//
//	cfg, err := quorum.LoadConfig("zoo.cfg", log) // or quorum.DefaultConfig(dir)
//	s, err := quorum.Start(cfg, log)              // or StartWithListener(cfg, log, l)
//	addr := s.Addr()                              // the client listener
//	tlsAddr := s.SecureAddr()                     // secureClientPort's TLS listener (nil without one)
//	...
//	err = s.Shutdown(ctx)                         // or s.Close(); sessions survive a restart
//
// # Files
//
//	start.go            Start and StartWithListener (both modes), Addr, Close
//	server.go           Server, the replicator seam, Serve (internal/accept), the connection registry, Shutdown
//	failstop.go         fail-stop: a raft node that dies closes the server and reports on Failed()
//	raft.go             the replicator over a raftnode.Node; the standalone node's start
//	statemachine.go     the state machine behind raftnode.StateMachine: apply, snapshot, restore
//	quota.go            the rate-limited log of the quota warnings of applied txns
//	reconfig.go         reconfig's pure pieces: next members, raft change, synced quorum, config text
//	reconfig_request.go opcode 16 (reconfigEnabled), and adopting a reconfig's members when applied
//	expiry.go           the leader's timers: session expiry, container and TTL reaping
//	ensemble.go         an ensemble member: serving only with a leader, read-only mode,
//	                    session activity forwarded to the leader, follower status
//	ensemble_wait.go    handshakes that wait out a short election or catch up to a client's zxid
//	transport.go        the peer transport: raft messages and session activity over TCP
//	transport_inbound.go inbound peer connections: the hello (a server.N id), their bounds
//	transport_members.go the transport's members, replaced by a reconfig (setPeers)
//	transport_gone.go   the proof that a peer's process is gone (a closed connection, a refused dial)
//	peerframe.go        the peer frame format and its size limits (zkafka.peer.maxSnapshotBytes)
//	conn.go             one client connection: its reader and writer, order, notifications
//	inline.go           reads the reader answers itself (nothing queued at the writer),
//	                    the allocation-free getData, the throttled session touch
//	handshake.go        the ConnectRequest: a session created, resumed or revalidated
//	requests.go         a request frame into a call: writes into txns, auth, write replies
//	request_hook.go     Config.RequestHook (a test harness delays, fails or drops requests;
//	                    nil by default) and Server.ExpireSession
//	reads.go            the read requests against the tree, watch registration, sync
//	session.go          session ids, passwords, the session tracker (and a new leader's lease)
//	watch.go            the watch manager: one-shot, persistent and recursive watches
//	fourletter.go       the four-letter words (ruok, srvr, stat, conf, isro, wchs, ...)
//	mntr.go, dump.go, envi.go  mntr, dump and envi, key for key as ZooKeeper 3.8 prints them
//	connstats.go        per-connection counters for cons and stat
//	config.go           Config, zoo.cfg (through internal/properties) and myid
//	config_keys.go      the rules of every zoo.cfg key (QuorumPeerConfig's, or stricter)
//	config_dynamic.go   dynamicConfigFile: the server.N lines of zoo.cfg.dynamic.VERSION
//	config_tls.go       secureClientPort and ssl.*: the client TLS; sslQuorum and ssl.quorum.*
//	                    (stores through internal/keystore)
//	secure_quorum.go    quorum TLS: the peer transport inside TLS, portUnification,
//	                    sslQuorumReloadCertFiles
//	secure.go           the TLS client listener, the handshake, x509 identities of client certificates
//	                    (the subject as X500Principal.getName() writes it: internal/x509name)
//	config_sasl.go      client SASL and enforce.auth.*: authProvider.N, the JAAS file of the users
//	sasl.go             opcode 102 (DIGEST-MD5 through internal/digestmd5), sasl identities,
//	                    refusing unauthenticated clients (enforce.auth.*)
//	stats.go            the counters the four-letter words report
//	metrics.go          the Prometheus metrics (mntr's numbers, Apache's provider's names)
//	metrics_config.go   metricsProvider.* and admin.* (Prometheus endpoint, AdminServer)
//	metrics_http.go     the metrics and admin endpoints (internal/obshttp), /healthz, /readyz
//	adminserver*.go     the AdminServer: Commands.java's JSON commands under /commands
//	drain.go            Shutdown's drain: connections answer what they read, within a bound
//	limits_unix.go      the open-file limit, for mntr
//	zkdata.go           ImportTree and ExportTree: a tree from and to store/apachezk (zk-import, zk-export)
//
// # The request pipeline
//
// Each client connection has a reader goroutine and a writer goroutine
// (conn.go). The reader turns frames into calls in request order: a write
// becomes a txn proposed at once, so a session's writes enter the log in
// its order; a read waits in the queue. The writer answers the calls one by
// one: a write when its proposal's outcome is in, a read by executing it
// against the tree when its turn comes, so after every earlier write of the
// session has applied. A read (or a ready reply, a ping) that finds no call
// queued at the writer unanswered (conn.queued is zero) is answered by the
// reader itself (inline.go): no hand-off, no wake-up, and a getData without
// a watch allocates nothing; its reply is flushed once no further request
// is buffered, so pipelined reads share a write. Committed txns are applied
// by the raft loop of every member, through Server.apply (statemachine.go),
// which also fires the watches.
//
//	client                                                              client
//	  │                                                                    ▲
//	  ▼                                                                    │
//	reader ── decodeCall ──► calls (request order, ≤ 1000) ──► writer, one call at a time:
//	  │ frames ≤ jute.maxbuffer;                                 write: await its outcome
//	  │ ping, auth, bad requests: a ready reply                  read:  execute on the tree
//	  │ nothing queued: a read executed here,                    then:  queued events, the reply
//	  │   then queued events, the reply (conn.out) ────────────►  conn.out (one lock, one buffer)
//	  │ write: a txn, once the reads ahead of it are executed          ▲
//	  ▼                                                                │ conn.ev (≤ 4096)
//	repl.ProposeAsync ──► raft log (raftnode) ──► Server.apply, on every member's raft loop:
//	                                                tree.Apply(txn), zxid = raft index
//	                                                session tracker, connections
//	                                                watches.trigger ──► conn.ev
//	                                                result ──► the proposer's call
//
// A proposal whose outcome is not a result (raft's "outcome unknown", a
// dropped proposal, a stopped node) closes the connection without
// answering it or anything queued behind it: the client reconnects and
// finds out what happened, as after a lost connection in ZooKeeper.
//
// # Invariants
//
//   - Per-session FIFO: replies leave in request order (one calls queue, one
//     writer; the reader answers only when every call it queued is
//     answered). A read sees every write its session sent before it (the
//     writer executes it only after their outcomes are in) and none it sent
//     after it (the reader proposes a write only once the reads queued
//     before it are executed: conn.readsAhead).
//   - The zxid of a txn is its raft index. A tree imported from Apache
//     ZooKeeper (ImportTree, zkdata.go) becomes a raft snapshot at index =
//     its last zxid, so the log, and every zxid given out after it, starts
//     above every imported zxid: no offset to add, zxids only grow.
//     Zxids increase in log order on
//     every member, with gaps where raft has entries of its own (a new
//     leader's empty entry, configuration changes).
//   - apply is deterministic: every member applies the same txns to the same
//     tree. Everything a txn depends on travels in it: session, identities,
//     owner, time (Txn.Time is stamped by the server that took the request,
//     or by the one that expires the session or reaps the node, from its own
//     clock: it is not the leader's clock).
//   - A session's watch events are queued before the result of the write
//     that caused them reaches its call, and whichever goroutine writes a
//     reply sends the queued events before it (they are taken from conn.ev
//     only under conn.out's lock), so a client sees the event before the reply
//     of a write of its own that fired it, and before the reply of any
//     request it sent after the event was queued. A read never sees a
//     change whose events are not queued yet (Server.applyMu: apply holds
//     it from the tree's update to the last event, a read holds it for
//     reading), so a client sees the event of a watched change before the
//     change's data, as ZooKeeper's CommitProcessor, which runs no read
//     while it applies, guarantees. And no notification fired after a read
//     looked at the tree precedes the read's reply (the read and taking the
//     queued events are one step under applyMu, inside conn.out's lock:
//     conn.answerRead): ZooKeeper answers a read before a later commit fires
//     its watches, and go-zookeeper adds a watcher only when the reply of
//     the read that set it arrives, dropping a notification that comes
//     first. Notifications that fire while the writer waits for a write's
//     outcome, or after a reply, go out at once (notify wakes the writer).
//   - One-shot watches fire once; a watcher gets an event at most once
//     whatever the number of its watches that match; events reach only
//     watchers that may READ the node (ZooKeeper 3.8).
//   - Only the leader (or the standalone server) expires sessions
//     (expireSessions checks isLeader); the other members forward their
//     clients' activity to it every tickTime/2, and a new leader starts
//     every session's clock afresh before it expires any (session.go lease).
//     An expiry enters the log only if raft has this server lead when it
//     takes the txn (raftnode's ProposeLeaderFunc), never forwarded: a
//     leader resumed from a stop still believes it leads, with clocks that
//     did not hear the clients renew their sessions elsewhere, and its
//     close must not reach the new leader (ZooKeeper's deposed leader gets
//     no acks in the new epoch).
//   - Only the leader reaps empty containers and expired TTL nodes
//     (ZooKeeper's ContainerManager runs on the leader only).
//   - "Expired" (session id 0, timeout 0) is said only when the session is
//     known to be gone: the log's answer to a revalidation, or the tree
//     after catching up with the leader. A resume whose outcome is unknown
//     (no leader, leadership changed) is retried within half the session
//     timeout, then the connection closes without an answer, and the
//     client tries the next server.
//   - Every wait on a client's behalf ends with its connection and within
//     its session timeout: a sync's ReadIndex, a write's outcome.
//   - A server whose raft node stops on an error (its storage failed)
//     closes its listener and every connection and reports on Failed():
//     fail-stop, never stale reads.
//   - A session belongs to the member it was created on or last revalidated
//     on (Txn.Owner, the myid): a write of the session through another
//     member fails with SessionMoved there, and that connection closes
//     without a reply.
//   - A leader whose process is gone (its peer connection closed and its
//     peer port refuses connections) is replaced at once: the followers
//     forget it and the highest connected voter campaigns with a pre-vote
//     (raftnode's PeerGone, transport_gone.go). Any other loss (a stopped,
//     hung or partitioned leader) waits for raft's election timeout, 10
//     raft ticks of tickTime/40 (500 ms at tickTime 2000), randomized up
//     to twice that; nothing forces a vote, so a leader that a majority
//     still hears is never disturbed.
//   - A member serves read-write clients only while it knows a leader;
//     without one it closes them after a grace that covers an election raft
//     runs itself (24 raft ticks: two election timeouts and the round
//     trips) and gives clients that ask for read-only mode a local, never
//     replicated session whose writes and syncs answer NotReadOnly.
//   - A client that has seen a newer zxid than this server is refused at
//     the handshake (an ensemble member first tries to catch up, for at
//     most the same grace); an unknown or expired session, or a wrong password, is
//     answered with session id 0 and timeout 0. A member that lost its
//     leader a moment ago holds a new client's handshake until the
//     election ends, for what is left of the same grace
//     (ensemble_wait.go).
//   - The peer port takes only the server ids of server.N (a hello names
//     the id; with sslQuorum, only after a TLS handshake with a trusted
//     certificate), at most 16 connections waiting for their hello (3 s each)
//     and 2 per id; a frame's memory follows the bytes that arrived, up to
//     one raft message (or zkafka.peer.maxSnapshotBytes for a snapshot).
//   - Identities belong to a connection and only grow (ip at accept, x509
//     at the TLS handshake, digest on auth, sasl when a DIGEST-MD5 exchange
//     completes); a client that reconnects authenticates again. With
//     enforce.auth on, a connection without an identity of the enforced
//     schemes is answered SessionClosedRequireSASL to anything but auth and
//     sasl, and closed. A failed SASL exchange is answered only after
//     saslFailureDelay, and no password reaches the log.
//   - Memory per connection is bounded: 1000 calls in flight (the reader
//     stops reading), 4096 queued notifications (beyond, the connection is
//     closed), frames of at most jute.maxbuffer.
//   - Sessions and their ephemerals survive a restart or a Shutdown: they
//     are in the tree (and its snapshots), and a restored session's expiry
//     clock starts at the restart.
//
// Locks (LOCKS.md): Server.applyMu is taken first, by apply (for writing)
// and by a read (for reading, inside conn.out for a client's read); every
// other quorum lock is a leaf but conn.out, under which applyMu (R) and
// conn.ev are taken. The reader goroutine may wait for
// the writer (the calls queue is full, or reads are ahead of a write, or
// conn.out is held across a socket write), never the other way round but
// for conn.out.
//
// # Testing
//
// The unit tests run Servers without raft or disk: fakelog_test.go is a
// scripted replicator shared by the members of a test (it applies each
// entry through every member's Server.apply, in order, and can hold a
// proposal, fail it with "outcome unknown" or drop it), and the clients of
// pipeline_test.go speak the wire protocol over net.Pipe, driven by the
// datadriven scripts in testdata/pipeline (rewrite with -rewrite). The
// behaviour with real clients, raft and processes is tested in
// compat-tests.
package quorum
