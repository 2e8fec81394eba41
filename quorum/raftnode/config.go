package raftnode

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/zkafka/zkafka/store/segment"
)

// StateMachine is the replicated state that a Node applies committed
// entries to. All three methods are called on the Node's loop goroutine,
// never concurrently with each other.
type StateMachine interface {
	// Apply applies the payload of the committed entry at index (the
	// bytes given to Propose, on whichever node proposed them). It is
	// called exactly once per entry, in index order, and must be
	// deterministic: every node applies the same entries to the same
	// state. The result is handed to the Propose call that proposed the
	// entry, if it was on this node; otherwise it is dropped.
	Apply(index uint64, data []byte) any
	// Snapshot captures the state as of the last applied entry and returns
	// a function that serializes that capture. The capture must be cheap
	// (a copy-on-write clone): the returned func runs on another goroutine
	// while Apply goes on changing the live state.
	Snapshot() (write func(w io.Writer) error)
	// Restore replaces the whole state with a snapshot written by a write
	// func of Snapshot: at Start from the newest snapshot file, or when a
	// leader sends one to a follower that fell behind.
	Restore(r io.Reader) error
}

// Peer is a member of the initial configuration.
type Peer struct {
	ID      uint64 // the ZooKeeper myid; never 0
	Learner bool   // a non-voting member (a ZooKeeper observer)
}

// Transport sends raft messages to other nodes. Send must not block for
// long and must not modify the messages; it may drop them (raft retries).
// The receiving side calls Node.Step. A single-voter configuration needs
// no Transport.
type Transport interface {
	Send(msgs []*raftpb.Message)
}

// Config configures a Node. Zero fields take the defaults listed.
type Config struct {
	// ID is this node's id (ZooKeeper's myid); it must not be 0.
	ID uint64
	// Peers is the initial membership, this node included. It is used on
	// the first start only (an empty Dir); afterwards the membership comes
	// from the data directory. Default: ID alone, as a voter.
	Peers []Peer
	// Dir holds the raft log segments (Dir/log), the state file and the
	// snapshots. It is created if missing.
	Dir string
	// TickInterval is the length of one raft tick. Default 100ms.
	TickInterval time.Duration
	// ElectionTicks is the election timeout in ticks (randomized up to
	// twice that by raft). Default 10.
	ElectionTicks int
	// HeartbeatTicks is the leader's heartbeat interval in ticks; it must
	// be less than ElectionTicks. Default 1.
	HeartbeatTicks int
	// SnapshotEntries is the number of applied entries after which a
	// snapshot is taken (ZooKeeper's snapCount). Default 100000.
	SnapshotEntries uint64
	// SnapshotMargin is the number of entries kept in the log behind a
	// snapshot, so a follower slightly behind catches up from the log
	// rather than with a whole snapshot. Default SnapshotEntries/10,
	// at most 5000.
	SnapshotMargin uint64
	// SnapshotRetain is the number of snapshot files kept (ZooKeeper's
	// autopurge.snapRetainCount). Default 3; at least 1.
	SnapshotRetain int
	// Transport sends messages to the other peers; nil only for a single
	// voter.
	Transport Transport
	// Logger receives the node's and raft's log; nil discards it.
	Logger *slog.Logger
	// OnStateChange, when set, is called whenever the known leader or this
	// node's role changes (leader 0: none known). It runs on the loop
	// goroutine: it must be quick and must not call the Node's methods.
	OnStateChange func(leader uint64, role Role)
	// HandOver makes a newly elected leader hand leadership over, once, to
	// the voter with the highest id above its own whose log is fully
	// caught up, within two election timeouts of its election; so that,
	// as in ZooKeeper, the most recent log and then the highest id leads.
	HandOver bool
	// TransportReportsSnapshots says that the Transport calls
	// ReportSnapshot for every MsgSnap it is given (delivered or not);
	// otherwise each MsgSnap is reported delivered as soon as it is sent.
	TransportReportsSnapshots bool
	// ForwardTimeoutTicks fails a proposal forwarded to a leader with
	// ErrOutcomeUnknown when it has not shown up in the local log after
	// this many ticks (the message or the leader was lost but the term did
	// not change). Default 4×ElectionTicks.
	ForwardTimeoutTicks int
	// LogFS is the file system of the raft log (Dir/log); nil means the
	// operating system's. Tests hand in one that injects write and fsync
	// errors, to check that a node stops on a storage failure (see Err).
	LogFS segment.FS

	// openLog opens the raft log; nil means a segment log in Dir/log.
	// Benchmarks wrap it to count fsyncs.
	openLog func(dir string, logger *slog.Logger) (logStore, error)
	// segmentBytes is the segment size of the raft log; tests make it
	// small so that compaction deletes files. Default 64 MiB.
	segmentBytes int64
	// memTail is how many applied entries stay in memory (memtail.go);
	// tests make it small so that entries are read back from the log.
	// Default memTailEntries.
	memTail uint64
}

// PreVote and CheckQuorum are always on: a partitioned node cannot
// disrupt the cluster when it comes back, and a leader that loses its
// quorum steps down (so it cannot serve stale ReadIndex answers).

func (c *Config) setDefaults() {
	if len(c.Peers) == 0 {
		c.Peers = []Peer{{ID: c.ID}}
	}
	if c.TickInterval <= 0 {
		c.TickInterval = 100 * time.Millisecond
	}
	if c.ElectionTicks <= 0 {
		c.ElectionTicks = 10
	}
	if c.HeartbeatTicks <= 0 {
		c.HeartbeatTicks = 1
	}
	if c.ForwardTimeoutTicks <= 0 {
		c.ForwardTimeoutTicks = 4 * c.ElectionTicks
	}
	if c.SnapshotEntries == 0 {
		c.SnapshotEntries = 100000
	}
	if c.SnapshotMargin == 0 {
		c.SnapshotMargin = min(c.SnapshotEntries/10, 5000)
	}
	if c.SnapshotRetain <= 0 {
		c.SnapshotRetain = 3
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.segmentBytes <= 0 {
		c.segmentBytes = 64 << 20
	}
	if c.memTail == 0 {
		c.memTail = memTailEntries
	}
	if c.openLog == nil {
		size, fs := c.segmentBytes, c.LogFS
		c.openLog = func(dir string, logger *slog.Logger) (logStore, error) {
			return openSegLog(dir, size, fs, logger)
		}
	}
}

func (c *Config) validate() error {
	if c.ID == 0 {
		return errors.New("raftnode: Config.ID must not be 0")
	}
	if c.Dir == "" {
		return errors.New("raftnode: Config.Dir is empty")
	}
	if c.HeartbeatTicks >= c.ElectionTicks {
		return fmt.Errorf("raftnode: HeartbeatTicks (%d) must be less than ElectionTicks (%d)", c.HeartbeatTicks, c.ElectionTicks)
	}
	seen := make(map[uint64]bool, len(c.Peers))
	voters := 0
	for _, p := range c.Peers {
		if p.ID == 0 || seen[p.ID] {
			return fmt.Errorf("raftnode: peer id %d is 0 or listed twice", p.ID)
		}
		seen[p.ID] = true
		if !p.Learner {
			voters++
		}
	}
	if !seen[c.ID] {
		return fmt.Errorf("raftnode: node %d is not among the peers", c.ID)
	}
	if voters == 0 {
		return errors.New("raftnode: no voter among the peers")
	}
	if len(c.Peers) > 1 && c.Transport == nil {
		return errors.New("raftnode: several peers but no Transport")
	}
	return nil
}

// bootstrapState is the state file of a first start: term 0 and the
// membership of Config.Peers.
func (c *Config) bootstrapState() *persistedState {
	s := &persistedState{}
	for _, p := range c.Peers {
		if p.Learner {
			s.Learners = append(s.Learners, p.ID)
		} else {
			s.Voters = append(s.Voters, p.ID)
		}
	}
	return s
}
