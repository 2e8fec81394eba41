package controller

import (
	"fmt"
	"maps"
	"slices"
)

// Leader elections asked for by an operator (ElectLeaders, KIP-460) or by
// the leader-balance timer, decided as Kafka's ZooKeeper-mode controller
// does (KafkaController.processReplicaLeaderElection and
// checkAndTriggerAutoLeaderRebalance, with PartitionStateMachine's
// strategies):
//
//	PREFERRED  leader already the first replica of the assignment:
//	           ELECTION_NOT_NEEDED; the first replica live and in the ISR:
//	           it leads, ISR unchanged, epoch+1; otherwise
//	           PREFERRED_LEADER_NOT_AVAILABLE
//	UNCLEAN    leader live: ELECTION_NOT_NEEDED; otherwise the first live
//	           ISR member, failing that the first live replica (then the
//	           ISR alone), epoch+1; nobody live: ELIGIBLE_LEADERS_NOT_AVAILABLE
//	unknown    UNKNOWN_TOPIC_OR_PARTITION
//
// The balance check (RebalanceCheck, on the loop's timer): for each
// broker, the partitions it is the preferred replica of; when more than
// leader.imbalance.per.broker.percentage of them are led by another
// broker, a PREFERRED election of those it can lead now.

// ElectionType is ElectLeaders' election_type.
type ElectionType int8

const (
	ElectPreferred ElectionType = 0
	ElectUnclean   ElectionType = 1
)

// Kafka error codes of ElectLeaders answers.
const (
	CodeUnknownServerError          int16 = -1
	CodePreferredLeaderNotAvailable int16 = 80
	CodeEligibleLeadersNotAvailable int16 = 83
	CodeElectionNotNeeded           int16 = 84
)

// ElectRequest asks for elections of Partitions (nil: every partition).
type ElectRequest struct {
	Type       ElectionType
	Partitions []PartitionID
}

// PartitionResult is one partition's answer to an ElectLeaders or an
// AlterPartitionReassignments request.
type PartitionResult struct {
	Partition PartitionID
	Error     int16
	Message   string
}

// electLeaders is the event of an ElectLeaders request; StatesWritten
// fills in the answers of the partitions written.
type electLeaders struct{ req ElectRequest }

// RebalanceCheck: the leader-balance timer fired
// (leader.imbalance.check.interval.seconds).
type RebalanceCheck struct{}

func (electLeaders) isEvent()   {}
func (RebalanceCheck) isEvent() {}

// electState is the answer being built for the request in the step.
type electState struct {
	results []PartitionResult
	written map[PartitionID]int // partitions written → answer index
}

// electStep decides req and keeps the answer for takeElect.
func (c *Core) electStep(req ElectRequest) Effects {
	var eff Effects
	st := &electState{written: map[PartitionID]int{}}
	ids := req.Partitions
	if ids == nil {
		ids = c.sortedIDs()
	}
	for _, id := range ids {
		res := PartitionResult{Partition: id}
		next, code := c.elect(id, req.Type)
		if code == CodeNone {
			c.write(&eff, id, next)
			st.written[id] = len(st.results)
			// Until the write lands (a lost CAS leaves it so).
			code, res.Message = CodeUnknownServerError, "the partition state write failed"
		} else {
			res.Message = electMessage(id, req.Type, code)
		}
		res.Error = code
		st.results = append(st.results, res)
	}
	c.election = st
	return eff
}

// elect decides one partition's election of type t: the new state, or
// why there is none.
func (c *Core) elect(id PartitionID, t ElectionType) (LeaderAndISR, int16) {
	p := c.parts[id]
	failed := CodePreferredLeaderNotAvailable
	if t == ElectUnclean {
		failed = CodeEligibleLeadersNotAvailable
	}
	switch {
	case p == nil || len(p.Replicas) == 0:
		return LeaderAndISR{}, CodeUnknownTopicOrPartition
	case !p.HasState:
		return LeaderAndISR{}, failed
	case t == ElectPreferred && p.State.Leader == p.Replicas[0],
		t == ElectUnclean && p.State.Leader != NoLeader && c.isLive(p.State.Leader):
		return LeaderAndISR{}, CodeElectionNotNeeded
	case t == ElectPreferred:
		if next, ok := electPreferred(p.Replicas, p.State, c.isLive); ok {
			return next, CodeNone
		}
	default:
		if next, ok := electOffline(p.Replicas, p.State, c.isLive, true); ok {
			return next, CodeNone
		}
	}
	return LeaderAndISR{}, failed
}

// electPreferred is Kafka's PreferredReplicaPartitionLeaderElection: the
// first replica of the assignment, if live and in the ISR, leads; the ISR
// stays.
func electPreferred(replicas []int32, cur LeaderAndISR, live func(int32) bool) (LeaderAndISR, bool) {
	pref := replicas[0]
	if !live(pref) || !slices.Contains(cur.ISR, pref) {
		return LeaderAndISR{}, false
	}
	return LeaderAndISR{Leader: pref, LeaderEpoch: cur.LeaderEpoch + 1, ISR: slices.Clone(cur.ISR)}, true
}

// electMessage is the error_message Kafka gives with code.
func electMessage(id PartitionID, t ElectionType, code int16) string {
	switch code {
	case CodeUnknownTopicOrPartition:
		return "The partition does not exist."
	case CodeElectionNotNeeded:
		return "Leader election not needed for topic partition."
	}
	strategy := "PreferredReplicaPartitionLeaderElectionStrategy"
	if t == ElectUnclean {
		strategy = "OfflinePartitionLeaderElectionStrategy(true)"
	}
	return fmt.Sprintf("Failed to elect leader for partition %s-%d under strategy %s", id.Topic, id.Partition, strategy)
}

// electWritten fills in the answers of the partitions written.
func (c *Core) electWritten(ws []StateWrite) {
	if c.election == nil {
		return
	}
	for _, w := range ws {
		if j, ok := c.election.written[w.Partition]; ok {
			c.election.results[j].Error, c.election.results[j].Message = CodeNone, ""
		}
	}
}

// takeElect returns the answer of the last electStep; nil and false if
// this broker is not (or no longer) the controller.
func (c *Core) takeElect() ([]PartitionResult, bool) {
	st := c.election
	c.election = nil
	if st == nil || !c.active {
		return nil, false
	}
	return st.results, true
}

// rebalance is the balance check: a PREFERRED election of the partitions
// of each broker whose share of partitions led by another broker is above
// pct percent, among those it can lead now.
func (c *Core) rebalance(pct int) Effects {
	var eff Effects
	byPreferred := map[int32][]PartitionID{}
	for _, id := range c.sortedIDs() {
		if p := c.parts[id]; len(p.Replicas) > 0 {
			byPreferred[p.Replicas[0]] = append(byPreferred[p.Replicas[0]], id)
		}
	}
	for _, broker := range slices.Sorted(maps.Keys(byPreferred)) {
		ids := byPreferred[broker]
		var off []PartitionID
		for _, id := range ids {
			if p := c.parts[id]; p.HasState && p.State.Leader != broker {
				off = append(off, id)
			}
		}
		if float64(len(off))/float64(len(ids)) <= float64(pct)/100 {
			continue
		}
		for _, id := range off {
			if next, ok := electPreferred(c.parts[id].Replicas, c.parts[id].State, c.isLive); ok {
				c.write(&eff, id, next)
			}
		}
	}
	return eff
}

// ElectLeaders runs req through the loop and returns the answers, one per
// partition (every partition when req.Partitions is nil); ok is false
// when this broker is not the controller.
func (c *Controller) ElectLeaders(done <-chan struct{}, req ElectRequest) (results []PartitionResult, ok bool) {
	c.submit(done, true, func() Event {
		c.step(electLeaders{req}, false)
		results, ok = c.core.takeElect()
		return nil
	})
	return results, ok
}
