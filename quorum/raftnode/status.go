package raftnode

import (
	"fmt"
	"log/slog"
	"slices"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"
)

// Role is a node's part in the group.
type Role uint8

const (
	RoleFollower  Role = iota // a voter following a leader (or waiting for one)
	RoleCandidate             // a voter campaigning (PreVote included)
	RoleLeader                // the leader
	RoleLearner               // a non-voting member (a ZooKeeper observer)
)

func (r Role) String() string {
	switch r {
	case RoleFollower:
		return "follower"
	case RoleCandidate:
		return "candidate"
	case RoleLeader:
		return "leader"
	case RoleLearner:
		return "learner"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// Status is a node's view of the group.
type Status struct {
	ID           uint64
	Leader       uint64 // 0 when no leader is known
	Term         uint64
	Role         Role
	AppliedIndex uint64
	CommitIndex  uint64
	// Progress is, on the leader, the replication progress of every
	// member (itself included) by id; nil on other nodes.
	Progress map[uint64]Progress
	// Voters and Learners are the membership as of the last applied entry;
	// Outgoing holds the voters of the old configuration while the group
	// is in a joint one (a change of several voters), else nil.
	Voters, Learners, Outgoing []uint64
}

// Progress is how far the leader has replicated its log to one member.
type Progress struct {
	Match   uint64 // the highest index known to be in the member's log
	Next    uint64 // the next index the leader will send
	State   string // "probe", "replicate" or "snapshot"
	Learner bool
	Active  bool // heard from within the last election timeout
}

// status builds the Status; on the loop goroutine only.
func (n *Node) status() Status {
	rs := n.rn.Status()
	s := Status{
		ID: n.id, Leader: rs.Lead, Term: rs.HardState.GetTerm(),
		AppliedIndex: n.applied.Load(), CommitIndex: rs.HardState.GetCommit(),
		Role:   roleOf(rs.RaftState, n.isLearner()),
		Voters: slices.Clone(n.confState.GetVoters()), Learners: slices.Clone(n.confState.GetLearners()),
		Outgoing: slices.Clone(n.confState.GetVotersOutgoing()),
	}
	if rs.Progress != nil {
		s.Progress = make(map[uint64]Progress, len(rs.Progress))
		for id, pr := range rs.Progress {
			p := progressOf(pr)
			// raft clears RecentActive at every CheckQuorum tick until the
			// next heartbeat answer; a member heard from within the last
			// election timeout is active all the same.
			if t, ok := n.heard[id]; ok && n.ticks-t <= uint64(n.cfg.ElectionTicks) {
				p.Active = true
			}
			s.Progress[id] = p
		}
	}
	return s
}

func roleOf(st raft.StateType, learner bool) Role {
	switch {
	case learner:
		return RoleLearner
	case st == raft.StateLeader:
		return RoleLeader
	case st == raft.StateCandidate || st == raft.StatePreCandidate:
		return RoleCandidate
	}
	return RoleFollower
}

func progressOf(pr tracker.Progress) Progress {
	return Progress{Match: pr.Match, Next: pr.Next, State: pr.State.String(), Learner: pr.IsLearner, Active: pr.RecentActive}
}

// raftLogger adapts slog to raft.Logger. Raft's Info is its internal
// chatter (pre-votes, vote counts, "became candidate", configuration
// switches), which an operator does not need: it is logged at Debug, with
// raft's Debug. The node logs what an operator needs (leader changes,
// membership changes, problems) itself; raft's warnings and errors keep
// their levels.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any)                 { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Debugf(format string, v ...any) { r.l.Debug(fmt.Sprintf(format, v...)) }
func (r raftLogger) Info(v ...any)                  { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Infof(format string, v ...any)  { r.l.Debug(fmt.Sprintf(format, v...)) }
func (r raftLogger) Warning(v ...any)               { r.l.Warn(fmt.Sprint(v...)) }
func (r raftLogger) Warningf(format string, v ...any) {
	r.l.Warn(fmt.Sprintf(format, v...))
}
func (r raftLogger) Error(v ...any)                 { r.l.Error(fmt.Sprint(v...)) }
func (r raftLogger) Errorf(format string, v ...any) { r.l.Error(fmt.Sprintf(format, v...)) }
func (r raftLogger) Fatal(v ...any)                 { r.Panic(v...) }
func (r raftLogger) Fatalf(format string, v ...any) { r.Panicf(format, v...) }
func (r raftLogger) Panic(v ...any) {
	s := fmt.Sprint(v...)
	r.l.Error(s)
	panic(s)
}
func (r raftLogger) Panicf(format string, v ...any) { r.Panic(fmt.Sprintf(format, v...)) }
