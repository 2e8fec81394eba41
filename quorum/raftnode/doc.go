// Package raftnode runs one member of a raft group on go.etcd.io/raft/v3:
// it owns the raft.RawNode, the durable log and snapshots, and the loop
// that applies committed entries to a StateMachine. It knows nothing of
// ZooKeeper: the quorum package puts the ZooKeeper server on top (a
// standalone server is a group of one voter; observers are learners).
//
// # Usage
//
//	n, err := raftnode.Start(raftnode.Config{ID: myid, Peers: peers, Dir: dir, Transport: t}, sm)
//	result, index, err := n.Propose(ctx, txn) // committed and applied locally
//	n.ProposeFunc(txn, func(result any, index uint64, err error) { … }) // same, async, in call order
//	n.ProposeFramed(buf, done)                // ProposeFunc of buf[FrameSize:], framed in place; done is a Done
//	n.ProposeLeaderFunc(txn, done)            // only if this node leads when raft takes it, else ErrNotLeader
//	err = n.ReadIndex(ctx)                    // linearizable barrier (ZooKeeper sync)
//	transport delivers: n.Step(ctx, msg)
//	<-n.Done(); n.Err()                       // the node stopped on its own: a storage error (fail-stop)
//	n.Stop()
//
// # The loop
//
// Exactly one goroutine (run, in loop.go) calls the RawNode's Tick, Step,
// Propose, ReadIndex, Ready and Advance, and touches the storage and the
// state machine. Everything else talks to it through channels. Time enters
// only as Tick, from a ticker.
//
//	Propose   ReadIndex   Step (from peers)   ticker   snapshot writer
//	   |          |             |               |            |
//	   v          v             v               v            v
//	+-------------------------- loop goroutine -------------------------+
//	| take one input, then everything already queued (group commit)     |
//	| while rn.HasReady():                                              |
//	|   rd := rn.Ready()                                                |
//	|   1. apply rd.CommittedEntries that an earlier Ready fsynced;     |
//	|      a leader in the same term sends its MsgApp/MsgHeartbeat now  |
//	|   2. persist: a snapshot file from the leader, rd.Entries         |
//	|      (truncating a conflicting tail), ONE fsync of the log, the   |
//	|      state file if term or vote changed                           |
//	|   3. send rd.Messages through the Transport                       |
//	|   4. restore rd.Snapshot; apply the rest of rd.CommittedEntries   |
//	|      (StateMachine.Apply; conf changes: rn.ApplyConfChange) and   |
//	|      hand each result to its waiting Propose                      |
//	|   5. rd.ReadStates: complete ReadIndex calls once applied         |
//	|   6. rn.Advance(rd); every SnapshotEntries applied entries,       |
//	|      StateMachine.Snapshot(), written in the background           |
//	+-------------------------------------------------------------------+
//
// Invariants:
//   - Persist before send: the HardState and entries of a Ready are
//     durable before any of its messages leaves (a vote or an append
//     acknowledgement promises durability). The one exception is the
//     raft thesis's 10.2.1, which etcd raft allows: a leader whose term
//     and vote did not change sends its appends and heartbeats before its
//     own fsync, so followers write while it does. The followers' answers
//     are stepped only after that fsync (the loop is serial), so the
//     leader's copy is never counted before it is durable.
//   - Persist before apply: an entry is applied only once it is fsynced in
//     the local log (step 1 applies only entries an earlier Ready
//     fsynced; this lets the proposers of one batch queue the next batch
//     during the fsync, so many concurrent proposers share few fsyncs).
//   - Apply in order: entries are applied exactly once each, in index
//     order, on the loop goroutine; applied only grows (a snapshot from
//     the leader jumps it forward).
//
// # Proposals
//
// Propose frames its data with the node id and a per-node sequence number
// (starting at a random value, so it stays unique across restarts); when
// the entry is applied, the node that proposed it hands Apply's result to
// the waiting caller. A proposal is settled precisely once it has been
// seen in the local log at some index: when that index is applied it
// either is the proposal (success) or is not (ErrProposalDropped). A
// proposal forwarded to a leader that loses its term before the entry
// shows up locally fails with ErrOutcomeUnknown. While no leader is known,
// proposals and reads wait, in order, and are retried on the next tick.
// The loop hands a proposal to raft together with the normal proposals
// queued behind it, as one MsgProp (loop.go, proposeQueued): raft's cost
// per message is paid per batch; a batch raft drops is proposed again one
// by one. ProposeFramed takes a buffer with room for the frame in front
// of the payload, and a Done rather than a closure, so that a proposal
// costs the caller no copy and no extra allocation.
//
// # On disk (Config.Dir)
//
//	log/00000000000000000001.log …  the raft log: a store/segment log whose
//	                                 offset i is the entry with index i, as
//	                                 a one-offset record batch whose payload
//	                                 is type (1) | term (8) | data; offset
//	                                 0 is never used
//	raftstate                        term, vote, commit hint and the
//	                                 bootstrap membership (statefile.go)
//	snap-00000000000000100000        snapshots by index (snapfile.go)
//
// The HardState's commit index is written only with term and vote
// changes, at Stop and after snapshots: raft does not need it durable, and
// a restarted node learns it from the leader (a single voter re-commits
// its whole log as soon as it is leader again). Restart = the newest
// snapshot that checks out + the log after it + the state file. The
// segment log truncates a torn tail on open.
//
// Log compaction: after a snapshot at index i is on disk, raft's first
// index moves to i-SnapshotMargin, the log drops the entries below it (it
// deletes whole segments), and only the newest SnapshotRetain snapshot
// files are kept. Between snapshots the MemoryStorage holds only the last
// 8192 or so applied entries (memtail.go); raft reads older ones, for a
// follower that lags, back from the log. A follower that needs compacted entries gets
// MsgSnap, whose Data is the snapshot file's bytes, read when raft asks
// for it; the follower checks them, stores them as its own snapshot file,
// resets its log and restores its state machine.
//
// Seed (seed.go) prepares an empty directory whose first start begins
// from a given state machine snapshot at a given index (an imported tree:
// the log then starts at index+1); Replay reads a stopped node's committed
// state without starting it (an export).
//
// # Elections
//
// PreVote and CheckQuorum are always on. With Config.HandOver a new leader
// hands leadership over once to the highest voter above it that took part
// in its election and is caught up (ZooKeeper's outcome). When the
// Transport proves that the leader's process is gone (PeerGone), the
// followers forget it, after stepping the messages that reached them
// before the proof (raft's ForgetLeader: they grant votes at once instead
// of after their lease) and the highest connected voter campaigns
// at once, with a pre-vote, retried for up to an election timeout; a
// follower that refuses that pre-vote because its log is ahead campaigns
// itself (election.go). No vote is ever forced (no MsgTimeoutNow outside
// the hand-over), so a proof that is wrong moves nothing while a majority
// hears the leader.
//
// # Membership
//
// The first start writes Config.Peers as the membership into the state
// file (a ConfState at index 0, as raft recommends instead of
// RawNode.Bootstrap, and which, unlike Bootstrap, can hold learners).
// Later changes are ConfChangeV2 entries proposed with ProposeConfChange
// (confchange.go) in the loop like any proposal: the entry's Context is a
// framed payload that the state machine applies at the change's index, so
// that the application's record of the members changes with raft's. A
// change of several voters goes through joint consensus, left by raft on
// its own. On restart the changes after the newest snapshot are replayed
// from the log; the snapshot's metadata holds the membership before them.
// A node that joins starts on an empty Dir with Peers = the current voters
// and itself as a learner, and waits to be added.
package raftnode
