// Package apachezk reads and writes the data directory of Apache ZooKeeper
// 3.8 (dataDir/version-2): it loads the newest valid snapshot, replays the
// txn logs on top exactly as ZooKeeper's FileTxnSnapLog.restore does, and
// writes a snapshot that ZooKeeper loads. The result moves to and from
// store/znode as znode.Records (see Tree.Records and znode.Build).
//
// # Usage
//
//	dt, info, err := apachezk.LoadDir("/var/lib/zookeeper/version-2") // snapshot + logs
//	tree, err := dt.Tree(znode.Options{})                              // a znode.Tree at dt.LastZxid
//	name, err := apachezk.WriteSnapshotFile(dir, tree, zxid)           // the way back
//
// # Snapshot file: version-2/snapshot.<zxid in hex>
//
// Jute (big-endian; buffers and strings are len i32 | bytes, -1 = null),
// an Adler-32 over every byte before each seal (FileSnap, SnapStream,
// SerializeUtils, DataTree.serialize, ReferenceCountedACLCache):
//
//	FileHeader  magic "ZKSN" i32 | version 2 i32 | dbid i64
//	sessions    count i32, then per session: id i64 | timeout i32
//	ACL cache   count i32, then per entry: id i64 | vector<ACL> (perms i32 | scheme | id)
//	nodes       per node, parents first: path ustring ("" is the root)
//	            | data buffer | acl id i64 (-1 = world:anyone ALL)
//	            | StatPersisted: czxid mzxid ctime mtime i64 | version cversion aversion i32
//	                             | ephemeralOwner pzxid i64
//	            then the path "/" ends the list
//	seal        adler32 i64 | "/" ustring
//	digest      zxid i64 | digestVersion i32 | digest i64   (3.6+, when digests are on)
//	seal        adler32 i64 (of everything before it) | "/" ustring
//
// The zxid of a snapshot is in its name; a snapshot is "fuzzy": it may hold
// changes of txns after that zxid, which is why replaying them ignores
// NoNode and NodeExists, as ZooKeeper does.
//
// # Txn log file: version-2/log.<zxid of its first txn in hex>
//
//	FileHeader  magic "ZKLG" i32 | version 2 i32 | dbid i64
//	per txn     adler32 of the entry i64 | entry buffer | 'B' (0x42)
//	entry       TxnHeader: clientId i64 | cxid i32 | zxid i64 | time i64 | type i32
//	            | the txn record of that type (zookeeper.jute, module txn)
//	            | TxnDigest: version i32 | treeDigest i64 (3.6+, optional)
//	then zeros  (the file is preallocated in 64 MiB steps)
//
// An entry of length 0 (the preallocated zeros), a file that ends inside an
// entry, or an entry without its 'B' ends that file: ZooKeeper reads the
// valid prefix and goes on with the next log file, and so does LoadDir (a
// server killed mid-write leaves such a torn file, and after a restart it
// is no longer the last one). A checksum that does not match, a wrong magic
// or version, an unknown txn type or a record that does not parse stops the
// load with the file and the offset.
//
// # Differences from ZooKeeper
//
//   - The tree digests (snapshot and TxnDigest) are read but not checked.
//   - Quota stat nodes (zookeeper_stats) are carried as data; replaying the
//     log does not recompute them.
//   - Only uncompressed snapshots are read (ZooKeeper's default; not
//     .gz or .snappy).
package apachezk
