package quorum

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/segment"
)

// raftReplicator replicates txns through a raftnode.Node.
type raftReplicator struct {
	node      *raftnode.Node
	transport *peerTransport // nil when standalone
	// maxEntry bounds a proposal's data in an ensemble (peerLimits.entry):
	// no peer would take a larger one; 0 when standalone.
	maxEntry int
}

// errTxnTooLarge fails a proposal too large for the peer frames.
var errTxnTooLarge = errors.New("quorum: txn too large to replicate to the peers (over 2 × jute.maxbuffer)")

// startRaft starts the raft node of a standalone server: one voter whose id
// is myid (1 when there is no myid file). fs is the raft log's file system
// (nil: the operating system's).
func startRaft(s *Server, dir string, fs segment.FS) (*raftReplicator, error) {
	id := s.cfg.MyID
	if id == 0 {
		id = 1
	}
	node, err := raftnode.Start(raftnode.Config{
		ID:              id,
		Peers:           []raftnode.Peer{{ID: id}},
		Dir:             dir,
		TickInterval:    raftTick(s.cfg.TickTime),
		ElectionTicks:   10,
		HeartbeatTicks:  1,
		SnapshotEntries: s.cfg.SnapCount,
		SnapshotRetain:  s.cfg.SnapRetainCount,
		Logger:          s.log.With("component", "raft"),
		LogFS:           fs,
	}, stateMachine{s})
	if err != nil {
		return nil, err
	}
	return &raftReplicator{node: node}, nil
}

// raftTick derives raft's tick from ZooKeeper's tickTime: twenty raft ticks
// per ZooKeeper tick, so that elections take well under a tickTime.
func raftTick(tickTime time.Duration) time.Duration {
	return max(tickTime/20, 5*time.Millisecond)
}

// ProposeAsync implements replicator.
func (r *raftReplicator) ProposeAsync(data []byte) <-chan proposeResult {
	buf := append(make([]byte, raftnode.FrameSize, raftnode.FrameSize+len(data)), data...)
	return r.ProposeFramed(buf)
}

// ProposeFramed implements framedProposer: it proposes the payload of
// buf, behind raftnode.FrameSize reserved bytes.
func (r *raftReplicator) ProposeFramed(buf []byte) <-chan proposeResult {
	out := make(proposeDone, 1)
	if size := len(buf) - raftnode.FrameSize; r.maxEntry > 0 && size > r.maxEntry {
		out <- proposeResult{err: fmt.Errorf("%w: %d bytes, limit %d", errTxnTooLarge, size, r.maxEntry)}
		return out
	}
	r.node.ProposeFramed(buf, out)
	return out
}

// proposeDone is the channel ProposeAsync returns, as the raftnode.Done
// that fills it: a channel is passed as an interface without allocating,
// where a closure over it would be allocated per proposal.
type proposeDone chan proposeResult

// ProposalDone implements raftnode.Done.
func (d proposeDone) ProposalDone(value any, _ uint64, err error) {
	res := proposeResult{err: err}
	if err == nil {
		res.applied, _ = value.(*appliedTxn)
	}
	d <- res
}

// ProposeLeading implements leaderProposer: the txn enters the log only
// if this server is raft's leader when the raft loop takes it.
func (r *raftReplicator) ProposeLeading(data []byte) <-chan proposeResult {
	out := make(proposeDone, 1)
	r.node.ProposeLeaderFunc(data, out.ProposalDone)
	return out
}

// ProposeWithin implements withdrawableProposer: a proposal still parked
// (no leader known) when ctx ends is withdrawn, never proposed.
func (r *raftReplicator) ProposeWithin(ctx context.Context, data []byte) proposeResult {
	value, _, err := r.node.Propose(ctx, data)
	if err != nil {
		return proposeResult{err: err}
	}
	applied, _ := value.(*appliedTxn)
	return proposeResult{applied: applied}
}

// ReadIndex implements replicator.
func (r *raftReplicator) ReadIndex(ctx context.Context) error { return r.node.ReadIndex(ctx) }

// Stop implements replicator.
func (r *raftReplicator) Stop() error {
	err := r.node.Stop()
	if r.transport != nil {
		r.transport.close()
	}
	return err
}
