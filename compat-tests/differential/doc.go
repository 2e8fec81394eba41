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
// # Not covered here
//
// Container and TTL reaping depend on the server's background timer, so a
// run uses long TTLs and a long container check interval (see
// zkserver.Options.ContainerCheckInterval); reaping is checked separately.
// The go client cannot send getChildren (op 8), create2, addWatch,
// removeWatches, multiRead or getEphemerals; error codes it does not know are
// shown as numbers.
package differential
