package raftnode

import (
	"context"
	"errors"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// ErrConfChangePending is returned by ProposeConfChange on the leader when
// raft refuses the change: an earlier one is not applied yet, or the group
// is in a joint configuration that raft has not left yet (ZooKeeper's
// ReconfigInProgress). Nothing was applied; retrying later is safe.
var ErrConfChangePending = errors.New("raftnode: a configuration change is in progress")

// ProposeConfChange replicates a membership change together with data:
// the entry changes raft's configuration and the state machine applies
// data (when not empty) at the same index, so that every node sees both at
// once (the state machine's own record of the members, for instance). A
// change of more than one voter goes through joint consensus, which raft
// leaves on its own with a second, empty change (ConfChangeTransitionAuto).
// It returns what StateMachine.Apply returned for data and the index.
//
// The errors are Propose's, and ErrConfChangePending when this node is the
// leader and raft refuses the change. A follower forwards the change to the
// leader; if that leader refuses it the follower cannot tell, and the call
// ends with ErrOutcomeUnknown after ForwardTimeoutTicks.
func (n *Node) ProposeConfChange(ctx context.Context, cc *raftpb.ConfChangeV2, data []byte) (result any, index uint64, err error) {
	p := &proposal{seq: n.seq.Add(1), ctx: ctx, done: make(chan proposalResult, 1)}
	p.data = appendFrame(make([]byte, 0, frameSize+len(data)), n.id, p.seq, data)
	p.cc = proto.Clone(cc).(*raftpb.ConfChangeV2)
	p.cc.Context = p.data
	return n.await(ctx, p)
}

// proposeConfChange hands p's conf change to raft. On the leader raft
// appends it at once, or swaps it for an empty entry when it refuses it:
// p is checked at the next Ready (confChecked).
func (n *Node) proposeConfChange(p *proposal) error {
	if err := n.rn.ProposeConfChange(p.cc); err != nil {
		return err
	}
	if n.role == raft.StateLeader {
		n.w.ccCheck = append(n.w.ccCheck, p)
	}
	return nil
}

// confChecked fails the conf changes this leader proposed since the last
// Ready that are not among that Ready's entries: raft refused them.
func (n *Node) confChecked() {
	for _, p := range n.w.ccCheck {
		if p.index == 0 {
			delete(n.w.props, p.seq)
			p.finish(proposalResult{err: ErrConfChangePending})
		}
	}
	n.w.ccCheck = n.w.ccCheck[:0]
}

// confChangeOf decodes a conf change entry (nil if it does not decode).
func confChangeOf(e *raftpb.Entry) raftpb.ConfChangeI {
	switch e.GetType() {
	case raftpb.EntryConfChange:
		var c raftpb.ConfChange
		if proto.Unmarshal(e.GetData(), &c) != nil {
			return nil
		}
		return &c
	case raftpb.EntryConfChangeV2:
		var c raftpb.ConfChangeV2
		if proto.Unmarshal(e.GetData(), &c) != nil {
			return nil
		}
		return &c
	}
	return nil
}

// frameOf returns the framed data of an entry: a normal entry's data, a
// conf change's context.
func frameOf(e *raftpb.Entry) []byte {
	if e.GetType() == raftpb.EntryNormal {
		return e.GetData()
	}
	if cc := confChangeOf(e); cc != nil {
		return cc.AsV2().GetContext()
	}
	return nil
}
