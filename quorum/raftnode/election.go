package raftnode

import (
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// A dead leader is noticed by raft only when its heartbeats have been
// missing for an election timeout (randomized up to twice ElectionTicks),
// and then the other voters' CheckQuorum lease makes them ignore votes
// until an election timeout has passed since they last heard it. ZooKeeper
// starts its leader election as soon as the socket to the leader closes.
// The Transport can do as well when it has proof that the leader's
// process is gone (PeerGone: its connection closed and its peer port
// refuses connections, which a stopped, slow or partitioned process never
// does: its kernel still accepts, or nothing answers). Then:
//
//   - every follower forgets the leader (raft's ForgetLeader), once it
//     has stepped the messages that reached it before the proof: it stays
//     a follower in its term but grants pre-votes and votes at once rather
//     than after its lease; it follows the leader again at its next
//     heartbeat, should it come;
//   - one voter, the highest id among those still connected (ZooKeeper's
//     election prefers the highest id, and one candidate cannot split the
//     vote), campaigns at once, with a pre-vote, for up to an election
//     timeout while a pre-vote finds no majority yet (the others may learn
//     of the loss a moment later than it did);
//   - a follower that forgot the leader and then refuses the campaigner's
//     pre-vote because the campaigner's log is behind its own (the leader
//     had reached it and not the campaigner) campaigns itself: the
//     campaigner cannot win without its vote, the dead leader votes for
//     nobody (backUp);
//   - the dead peer is no longer a candidate for the new leader's
//     hand-over (maybeHandOver): it took no part in the election.
//
// Nothing here forces a vote (no MsgTimeoutNow): a voter that hears from a
// live leader still refuses, so a wrong proof can delay nothing but the
// campaign itself, and cannot move a leadership that a majority still
// follows. Safety is raft's.

// goneAction is what a voter does on proof that a peer's process is gone.
type goneAction int

const (
	goneIgnore   goneAction = iota // not the leader, or this node cannot vote
	goneForget                     // forget the leader; another voter campaigns
	goneCampaign                   // forget the leader and campaign at once
)

// earlyRetryMin is the shortest interval between the early campaign's
// retries (a pre-vote round trip is well under it on a LAN).
const earlyRetryMin = 5 * time.Millisecond

func (a goneAction) String() string {
	return [...]string{"ignore", "forget", "campaign"}[a]
}

// onPeerGone decides what voter self does when peer gone's process is gone:
// lead is the leader self follows (0: none), follower whether self is a
// follower, voters the voters of the configuration, connected the peers
// the Transport is connected to. A follower that knows no leader (it has
// just started, say, and the leader had not reached it yet) may be the one
// to campaign too: the gone peer may have been the leader, and if it was
// not, the voters that follow a live one ignore the pre-vote.
func onPeerGone(self, gone, lead uint64, follower bool, voters []uint64, connected func(uint64) bool) goneAction {
	if gone == 0 || (gone != lead && lead != 0) || !follower || !slices.Contains(voters, self) {
		return goneIgnore
	}
	var highest uint64
	for _, v := range voters {
		if v != gone && (v == self || connected(v)) {
			highest = max(highest, v)
		}
	}
	switch {
	case highest == self:
		return goneCampaign
	case lead == 0:
		return goneIgnore // nothing to forget
	}
	return goneForget
}

// peerGone acts on the Transport's proof that peer id's process is gone
// (PeerGone), on the loop goroutine. The messages queued before the proof
// are stepped first: the loop's select takes its inputs in no order, and a
// stale append or heartbeat of the dead leader stepped after ForgetLeader
// would make this node follow it again, and refuse (pre-)votes for the
// lease it renews: an election timeout (a follower catching up after a
// restart, or on a loaded machine, often has some still queued).
func (n *Node) peerGone(id uint64, connected []uint64) {
	n.stepQueued()
	delete(n.heard, id)
	ss := n.live()
	a := onPeerGone(n.id, id, ss.Lead, ss.RaftState == raft.StateFollower, n.confState.GetVoters(),
		func(v uint64) bool { return slices.Contains(connected, v) })
	if a == goneIgnore {
		return
	}
	n.logger.Info("raftnode: the leader's process is gone", "leader", id, "term", n.term, "action", a.String())
	if err := n.rn.ForgetLeader(); err != nil {
		n.logger.Debug("raftnode: forget leader", "err", err)
	}
	if a == goneForget {
		n.forgotUntil = n.ticks + uint64(n.cfg.ElectionTicks)
		return
	}
	n.earlyCampaign()
}

// stepQueued steps the messages already queued for the loop (which alone
// receives from recvc).
func (n *Node) stepQueued() {
	for range len(n.recvc) {
		n.step(<-n.recvc)
	}
}

// earlyCampaign campaigns at once, and again (retryEarlyCampaign) while
// its pre-vote finds no majority, for up to an election timeout.
func (n *Node) earlyCampaign() {
	n.earlyUntil = n.ticks + uint64(n.cfg.ElectionTicks)
	if n.earlyRetry == nil {
		n.earlyRetry = time.NewTicker(max(n.cfg.TickInterval/10, earlyRetryMin))
	}
	n.campaign()
}

// backUp runs after raft stepped m: if m is a pre-vote that this follower,
// which forgot a dead leader less than an election timeout ago and knows
// no other, refused because the candidate's log is behind its own, it
// campaigns itself (see above).
func (n *Node) backUp(m *raftpb.Message) {
	if m.GetType() != raftpb.MsgPreVote || n.forgotUntil == 0 {
		return
	}
	if ss := n.live(); n.ticks >= n.forgotUntil || ss.Lead != 0 || ss.RaftState != raft.StateFollower {
		n.forgotUntil = 0
		return
	}
	last, err := n.st.LastIndex()
	if err != nil {
		return
	}
	term, err := n.st.Term(last)
	if err != nil || !logBehind(m.GetLogTerm(), m.GetIndex(), term, last) {
		return
	}
	n.forgotUntil = 0
	n.logger.Info("raftnode: the candidate's log is behind this one; campaigning", "candidate", m.GetFrom(), "term", n.term)
	n.earlyCampaign()
}

// logBehind reports whether a log ending at (term, index) is behind one
// ending at (ourTerm, ourIndex): raft's voters refuse such a candidate.
func logBehind(term, index, ourTerm, ourIndex uint64) bool {
	return term < ourTerm || (term == ourTerm && index < ourIndex)
}

// earlyRetryC is the channel of the early campaign's retries (nil, which
// never fires, when none is under way).
func (n *Node) earlyRetryC() <-chan time.Time {
	if n.earlyRetry == nil {
		return nil
	}
	return n.earlyRetry.C
}

// retryEarlyCampaign campaigns again, every tenth of a tick for up to an
// election timeout, while the early campaign of peerGone is a
// pre-candidate without a majority: a voter that learnt of the loss a
// moment later had ignored its pre-vote. Pre-votes change no term, so a
// retry disturbs no one.
func (n *Node) retryEarlyCampaign() {
	if n.earlyRetry == nil {
		return
	}
	if n.ticks >= n.earlyUntil || n.live().RaftState != raft.StatePreCandidate {
		n.earlyRetry.Stop()
		n.earlyRetry = nil
		return
	}
	n.campaign()
}

// PeerGone tells the node that the Transport has proof that peer id's
// process is gone (its connection closed and its port refuses
// connections); connected are the peers the Transport is still connected
// to. The Transport calls it after Step returned for every message it
// received from id. If id is the leader, a new one is elected at once (see
// above). It never blocks (the proof is dropped when the queue is full:
// raft's timeouts elect as before).
func (n *Node) PeerGone(id uint64, connected []uint64) {
	select {
	case n.reportc <- report{id: id, gone: true, connected: connected}:
	default:
	}
}

// live is raft's state of the moment. n.lead and n.role are those of the
// last Ready, and the loop takes every queued input before the next one:
// a pre-vote stepped right after the ForgetLeader of peerGone, or a retry
// right after the campaign, must see what raft has now, not the leader
// it had (which would end the back-up, or the retries, at once).
func (n *Node) live() raft.SoftState {
	return n.rn.BasicStatus().SoftState
}

func (n *Node) campaign() {
	if err := n.rn.Campaign(); err != nil {
		n.logger.Debug("raftnode: campaign", "err", err)
	}
}
