// Package differential sends the same long, seeded sequence of ZooKeeper
// operations to two servers through the go-zookeeper client and compares every
// reply. It is the cross-checker of STYLE.md habit 15: Apache ZooKeeper is the
// reference, zkafka the server under test.
//
// Usage:
//
//	ops := differential.Generate(seed, 2000)
//	a, b := differential.RunPair(ctx, addrA, addrB, ops, differential.Config{})
//	if diffs := differential.Compare(a, b, 10); len(diffs) > 0 {
//		fmt.Print(differential.Format(a, b, diffs))
//	}
//
// The command zkdiff (./cmd/zkdiff) does the same against two running servers.
// Config.FourLetterWords adds the four-letter words to the comparison (see
// "Four-letter words" below).
//
// # What is compared
//
// Generate draws operations from a small namespace under /d, so that creates,
// deletes and sets collide often and produce every error: persistent,
// ephemeral, sequential, ephemeral-sequential, container and TTL creates;
// deletes and sets with versions; exists/get/getChildren2 with and without
// watches; getACL/setACL with world, digest and auth ACLs and AddAuth; multi
// with failing and invalid ops (the only way the go client sends an invalid
// path); sync; reads of /, /zookeeper and /zookeeper/config; and closing a
// session (its ephemerals go) followed by opening a new one in its slot.
// An operation may name an earlier create instead of a path ("the path that
// op #17 returned"), so sequential names are reused without the generator
// knowing any server state: the sequence is a pure function of the seed.
//
// For each operation the runner records one Record: the error, returned path,
// data (null and empty differ), sorted children, ACLs, per-op multi results,
// and the stat, normalized:
//
//   - zxids are replaced by their rank of first appearance in the run (Z1, Z2,
//     ...), so relations such as czxid == mzxid, or a parent's pzxid == a
//     child's czxid, compare equal while absolute values, which differ between
//     servers (Apache spends zxids on createSession and closeSession), do not;
//   - ctime and mtime are not compared, only checked to be 0 or within the
//     run's wall-clock window ("t" in the output, "t?" when not);
//   - ephemeralOwner is replaced by the slot label of the session that owns
//     it (s2g1 = slot 2, second session in that slot).
//
// # Watches
//
// Every session records the watch events it receives, in arrival order, from
// the client's event callback (which runs on the client's receive goroutine,
// so it is ordered with the replies). After every operation that can fire a
// watch, the runner sends one read on every open session; ZooKeeper delivers
// a watch event before any reply that reflects the change, so when that read
// returns, every event caused by the operation has been recorded. The events
// are then attached to the operation's Record, grouped by session. No
// wall-clock waiting is involved.
//
// # Four-letter words
//
// With Config.FourLetterWords set (the tests use FourLetterWords: ruok,
// isro, srvr, stat, mntr, conf, cons, envi, dirs, wchs, wchc, wchp, dump),
// a run ends, while every session and its watches are still there, by
// asking the server each word on a connection of its own; each answer is one
// more Record, compared line by line like the others. NormalizeFourLetterWord
// keeps the layout (keys, field names and order, blank lines, a missing final
// newline) and the values that follow from the server's state and the run's
// operations, and replaces the rest by its shape ("<n>", "<double>", ...; a
// value that does not have the shape shows as "malformed(<shape>): value"):
//
//   - everywhere: session ids become slot labels (s2g1), "0x0" stays; client
//     ports, latencies, packet and byte counters, times (est, lresp, expiry
//     dates) and zxids (Apache ZooKeeper spends zxids on sessions) are shapes;
//     the version must read "3.8.x-..., built on <date> UTC".
//   - ruok, isro, wchs: every byte.
//   - srvr, stat: Connections, Outstanding, Mode and Node count are values
//     (ZooKeeper counts the root twice); the latency average is a Java double
//     (2.0, 0.3333, 9.0E-4); stat's connections are listed sorted (the
//     server's order is a hash order); a leader's "Proposal sizes" is a shape.
//   - cons: the fields of each connection line are compared by name and order;
//     queued and to (the session timeout) are values; lop is a shape (the last
//     op may be a ping); lcxid is dropped, as it is absent after a ping.
//   - mntr: the key set is compared (lines sorted, since the order is a hash
//     order). Values compared as values: zk_server_state, zk_znode_count,
//     zk_ephemerals_count, zk_watch_count, zk_global_sessions,
//     zk_local_sessions, zk_num_alive_connections, zk_outstanding_requests,
//     zk_approximate_data_size, zk_connection_drop_probability, the TLS and
//     mTLS connection counts, zk_peer_state, zk_quorum_size and the leader's
//     learner counts; and the cnt and sum of the per-namespace summaries
//     (zk_cnt_d_read_per_namespace ...: bytes of paths, data and child names
//     read and written under each top-level znode, deterministic for a given
//     run). Every other value (latencies, packet counts, pipeline and JVM
//     metrics, file descriptors, uptime) is an integer or a Java double shape.
//   - conf: values, except the client, election and quorum ports, the data
//     directories (Apache ZooKeeper shows its version-2 subdirectory) and
//     their sizes; server.N lines with their numbers as shapes.
//   - envi: the keys, in order; values only for os.name, os.arch,
//     os.version, user.name, user.home and java.io.tmpdir (same machine, same
//     user). The java.* keys are the JVM's; zkafka gives the same keys with
//     Go's answers (java.version is the Go version, java.home the binary's
//     directory), so their values, like host.name, user.dir and the
//     os.memory sizes, are compared by key only.
//   - dirs: shapes (file sizes).
//   - wchc, wchp: blocks and their entries sorted (hash order), everything
//     else a value. ZooKeeper reports its data-watch table only here (and in
//     wchs), while zk_watch_count counts data and child watches.
//   - dump: the expiry buckets depend on timing, so each bucket's header goes
//     and its members are listed sorted under the set's header, whose member
//     count is a value and bucket count a shape; ephemerals are grouped by
//     session, paths sorted; a learner's "Global Sessions" lines keep their
//     timeouts.
//
// The ensemble's counterpart (compat-tests/ensemble, TestEnsembleFourLetterWords)
// compares a leader's and a follower's words with the same normalization.
//
// # Not covered here
//
// Container and TTL reaping depend on the server's background timer, so a
// run uses long TTLs and a long container check interval (see
// zkserver.Options.ContainerCheckInterval); reaping is checked separately.
// The go client cannot send getChildren (op 8), create2, addWatch,
// removeWatches, multiRead or getEphemerals; error codes it does not know are
// shown as numbers.
package differential
