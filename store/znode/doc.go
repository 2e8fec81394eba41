// Package znode is the in-memory ZooKeeper data tree: znodes with their
// stats, ACLs, ephemerals, sequential counters, containers and TTL nodes,
// and the open sessions. It matches Apache ZooKeeper 3.8 (DataTree,
// PrepRequestProcessor, FinalRequestProcessor) in every answer a client
// can see.
//
// # Usage
//
// Writes are replicated as requests, not as pre-validated txns. Every server
// applies each committed raft entry in log order:
//
//	txn, err := znode.DecodeTxn(entry.Data) // encoded by Txn.Append on the proposer
//	txn.Zxid = int64(entry.Index)           // (or set before encoding)
//	results, events := tree.Apply(txn)      // validate + apply, atomically
//	// fire watches for events; answer the client from results
//
// Apply is deterministic: time and zxid come in the Txn, there is no
// randomness and no map iteration on the apply path, so every server reaches
// the same tree. Reads (Get, Stat, Children, ACL, ...) may run on other
// goroutines at the same time: a sync.RWMutex in Tree orders them. Reads do
// not allocate beyond their results; Get returns the stored data without
// copying it (read-only).
//
// Snapshots: Clone is cheap (copy-on-write), WriteSnapshot on the clone runs
// in the background while the original keeps applying, ReadSnapshot loads.
//
// # Layout
//
// Nodes live in one github.com/google/btree, keyed by the path with its last
// '/' replaced by 0x00:
//
//	/            -> "\x00"
//	/a           -> "\x00a"
//	/a/b         -> "/a\x00b"
//	/a/b/c       -> "/a/b\x00c"
//
// so keys sort by (parent path, child name). The children of P are the one
// contiguous range of keys starting with P+"\x00" (Children never visits a
// grandchild, and needs no per-node child set), a parent sorts before its
// children (snapshots stream parents first), and the descendants of P are
// the two ranges P+"\x00"... and P+"/"... (AllChildrenNumber). A node is
// 80 bytes plus one allocation holding key, data, ACL index and aversion.
// A second btree indexes nodes by raw ephemeralOwner (a session's
// ephemerals, containers, TTL nodes), a third holds the sessions.
//
// # Invariants
//
//   - Nodes are immutable once in the btree; a change replaces the node.
//     This is what makes Clone (btree copy-on-write) a consistent snapshot.
//   - Every node but the root has its parent in the tree; numChildren of a
//     node equals the number of keys in its child range.
//   - cversion is ZooKeeper's persisted cversion: it counts child creates
//     only. It is the sequence suffix of the next sequential child, and
//     clients see 2*cversion - numChildren (DataNode.copyStat), which counts
//     creates and deletes. So a fresh root shows cversion -1 and /zookeeper -2.
//   - Containers (owner math.MinInt64) and TTL nodes (owner 0xff<<56 | ttl)
//     keep that owner internally and show ephemeralOwner 0.
//   - owners has exactly one entry per node whose owner is not 0.
//   - The ACL table only grows while the tree lives; Clone shares its prefix.
//   - LastZxid is the Zxid of the last Apply, failed or not. A tree built
//     from another format (Build: an Apache ZooKeeper import) starts at that
//     format's last zxid; its owner (quorum) applies later txns with larger
//     zxids only (the raft log of an imported tree starts after it).
//
// Build and Records move whole trees in and out as Records (StatPersisted
// fields, the persisted cversion, the raw ephemeralOwner), for
// store/apachezk.
//
// # Differences from ZooKeeper
//
//   - Quotas (quota.go) are checked in Apply, in log order, where
//     ZooKeeper's leader checks them against its committed tree before the
//     write is logged: two pipelined creates, or the ops of one multi, that
//     together go over a hard quota are refused here and both accepted
//     there. The set of quota'd paths is derived from the zookeeper_limits
//     nodes instead of kept in a PathTrie, and stats are not recomputed
//     when a snapshot is read (they are exact in zkafka's snapshots).
//     A soft overrun yields Result.Warning whether or not quotas are
//     enforced (ZooKeeper 3.8 logs only when enforcing).
//   - Data larger than MaxDataBytes fails with BadArguments; ZooKeeper never
//     sees such a request, because the connection layer drops any frame over
//     jute.maxbuffer first.
//   - Only the ip (IPv4, as in 3.8) and digest auth providers exist.
package znode
