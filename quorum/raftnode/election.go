package raftnode

import (
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// leaderClosed starts an election at once when the leader's connection
// closed (Node.PeerClosed), as a ZooKeeper follower starts its leader
// election as soon as its socket to the leader closes, instead of waiting
// for raft's election timeout (randomized in [1, 2) × ElectionTicks) to
// notice the missing heartbeats.
//
// Only one voter campaigns, the one with the highest id among the voters
// other than the leader (ZooKeeper's election prefers the highest id too,
// and two candidates at once would split the vote). It campaigns as a
// leadership transfer does (raft's MsgTimeoutNow): the other voters grant
// their vote although they heard from the leader within an election
// timeout (CheckQuorum's lease), which they would otherwise refuse. A
// vote is still granted only to a candidate whose log is at least as up to
// date as the voter's, so safety is raft's; if the leader was in fact
// alive (only a connection broke), it steps down for a new term: a
// disruption, never a lost write. If the campaign fails (its log is
// behind), the others' election timeouts elect a leader as before.
func (n *Node) leaderClosed(id uint64) {
	if id == 0 || id != n.lead || n.role != raft.StateFollower || n.isLearner() {
		return
	}
	var highest uint64
	for _, v := range n.confState.GetVoters() {
		if v != id {
			highest = max(highest, v)
		}
	}
	if highest != n.id {
		return
	}
	n.logger.Info("raftnode: the leader closed its connection; campaigning", "leader", id, "term", n.term)
	m := &raftpb.Message{Type: raftpb.MsgTimeoutNow.Enum(), From: new(id), To: new(n.id), Term: new(n.term)}
	if err := n.rn.Step(m); err != nil {
		n.logger.Debug("raftnode: campaign", "err", err)
	}
}
