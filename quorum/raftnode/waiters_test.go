package raftnode

import (
	"context"
	"errors"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

func newProposal(w *waiters, seq, term uint64) *proposal {
	p := &proposal{seq: seq, ctx: context.Background(), done: make(chan proposalResult, 1), term: term}
	w.props[seq] = p
	return p
}

func framed(index, node, seq uint64) *raftpb.Entry {
	return &raftpb.Entry{Index: new(index), Term: new(uint64(1)), Type: raftpb.EntryNormal.Enum(), Data: appendFrame(nil, node, seq, []byte("x"))}
}

func result(t *testing.T, p *proposal) proposalResult {
	t.Helper()
	select {
	case r := <-p.done:
		return r
	default:
		t.Fatalf("proposal %d not settled", p.seq)
		return proposalResult{}
	}
}

func pending(p *proposal) bool { return len(p.done) == 0 }

// TestWaitersSettle checks how proposals are settled: by their own entry,
// as dropped when another entry wins their index, as unknown when the term
// changes before they were seen, or when a snapshot covers them.
func TestWaitersSettle(t *testing.T) {
	const self = 1
	w := newWaiters()
	won := newProposal(&w, 10, 1)
	lost := newProposal(&w, 11, 1)
	unseen := newProposal(&w, 12, 1)
	later := newProposal(&w, 13, 2)
	w.seen(self, []*raftpb.Entry{framed(5, self, 10), framed(6, self, 11), framed(7, 2, 12)})

	// A new term: only the unseen proposal from the old term is in doubt.
	w.termChanged(2)
	if r := result(t, unseen); !errors.Is(r.err, ErrOutcomeUnknown) {
		t.Fatalf("unseen: %v", r.err)
	}
	if !pending(won) || !pending(lost) || !pending(later) {
		t.Fatalf("seen proposals or new-term ones were settled by the term change")
	}

	w.applied(5, self, 10, true, self, "ok")
	if r := result(t, won); r.err != nil || r.value != "ok" || r.index != 5 {
		t.Fatalf("won: %+v", r)
	}
	// Index 6 went to another node's entry: ours is certainly not applied.
	w.applied(6, 2, 99, true, self, nil)
	if r := result(t, lost); !errors.Is(r.err, ErrProposalDropped) {
		t.Fatalf("lost: %+v", r)
	}

	w.seen(self, []*raftpb.Entry{framed(9, self, 13)})
	w.snapshotRestored(8)
	if !pending(later) {
		t.Fatalf("a proposal seen above the snapshot was settled")
	}
	w.snapshotRestored(9)
	if r := result(t, later); !errors.Is(r.err, ErrOutcomeUnknown) {
		t.Fatalf("covered by a snapshot: %+v", r)
	}
	if len(w.props) != 0 || len(w.atIndex) != 0 {
		t.Fatalf("leftovers: %v %v", w.props, w.atIndex)
	}
}
