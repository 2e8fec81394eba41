package controller

import "slices"

// AlterPartition (KIP-497): a partition leader asks to change its ISR.
// Core decides each partition as Kafka's ZooKeeper-mode controller does
// (KafkaController.processAlterPartition); the loop writes the accepted
// partitions with a CAS on each state znode's version (the partition
// epoch), as any step's writes, and answers with the new states or the
// errors.

// Kafka error codes of AlterPartition answers.
const (
	CodeNone                    int16 = 0
	CodeUnknownTopicOrPartition int16 = 3
	CodeNotController           int16 = 41
	CodeStaleBrokerEpoch        int16 = 77
	CodeFencedLeaderEpoch       int16 = 74
	CodeInvalidUpdateVersion    int16 = 95
	CodeIneligibleReplica       int16 = 107
)

// AlterISR is one partition of an AlterPartition request.
type AlterISR struct {
	Partition      PartitionID
	LeaderEpoch    int32
	ISR            []int32
	PartitionEpoch int32 // the state znode version the proposal builds on
}

// AlterResult is one partition's answer: Error, or the state now in
// ZooKeeper at PartitionEpoch.
type AlterResult struct {
	Partition      PartitionID
	Error          int16
	State          LeaderAndISR
	PartitionEpoch int32
}

// AlterRequest is an AlterPartition request from broker with its broker
// epoch, which must be its live registration's (Kafka refuses -1 too).
type AlterRequest struct {
	Broker      int32
	BrokerEpoch int64
	Partitions  []AlterISR
}

// AlterPartition decides req: the partitions to write (eff, one write
// each) and the answers of those refused or already in the asked state.
// topErr is the request's error (NOT_CONTROLLER, STALE_BROKER_EPOCH).
func (c *Core) AlterPartition(req AlterRequest) (eff Effects, results []AlterResult, topErr int16) {
	if !c.active {
		return Effects{}, nil, CodeNotController
	}
	if e, ok := c.live[req.Broker]; !ok || e != req.BrokerEpoch {
		return Effects{}, nil, CodeStaleBrokerEpoch
	}
	for _, a := range req.Partitions {
		res := AlterResult{Partition: a.Partition}
		p := c.parts[a.Partition]
		switch {
		case p == nil || !p.HasState:
			res.Error = CodeUnknownTopicOrPartition
		case a.PartitionEpoch > p.ZkVersion || a.LeaderEpoch > p.State.LeaderEpoch:
			// The leader knows a newer state than this controller: likely
			// no longer the controller.
			res.Error = CodeNotController
		case a.LeaderEpoch < p.State.LeaderEpoch:
			res.Error = CodeFencedLeaderEpoch
		case sameMembers(a.ISR, p.State.ISR):
			res.State, res.PartitionEpoch = cloneState(p.State), p.ZkVersion // already so: idempotent
		case a.PartitionEpoch < p.ZkVersion:
			res.Error = CodeInvalidUpdateVersion
		case slices.ContainsFunc(a.ISR, func(id int32) bool { return !c.isLive(id) }) || len(a.ISR) == 0:
			res.Error = CodeIneligibleReplica
		default:
			c.write(&eff, a.Partition, LeaderAndISR{Leader: p.State.Leader, LeaderEpoch: p.State.LeaderEpoch, ISR: a.ISR})
			continue
		}
		results = append(results, res)
	}
	return eff, results, CodeNone
}

func sameMembers(a, b []int32) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func cloneState(s LeaderAndISR) LeaderAndISR {
	s.ISR = slices.Clone(s.ISR)
	return s
}

// AlterResponse is the loop's answer to AlterPartition.
type AlterResponse struct {
	Error   int16
	Results []AlterResult
}

// alterPartition is the event of an AlterPartition request: Step decides
// it (alterStep) and the loop writes the accepted changes like any
// step's, in one fenced multi with a CAS per partition; StatesWritten
// then fills in their answers.
type alterPartition struct{ req AlterRequest }

func (alterPartition) isEvent() {}

// alterState is the answer being built for the request in the step.
type alterState struct {
	resp AlterResponse
	// written maps the partitions to write to their answers' indexes.
	written map[PartitionID]int
}

// alterStep decides req and keeps the answer for takeAlter.
func (c *Core) alterStep(req AlterRequest) Effects {
	eff, results, topErr := c.AlterPartition(req)
	st := &alterState{resp: AlterResponse{Error: topErr, Results: results}, written: map[PartitionID]int{}}
	for _, w := range eff.Writes {
		st.written[w.Partition] = len(st.resp.Results)
		// Until the write lands: a failed write (a CAS lost to another
		// writer) answers INVALID_UPDATE_VERSION.
		st.resp.Results = append(st.resp.Results, AlterResult{Partition: w.Partition, Error: CodeInvalidUpdateVersion})
	}
	c.alter = st
	return eff
}

// alterWritten fills in the answers of the partitions written.
func (c *Core) alterWritten(ws []StateWrite, versions []int32) {
	if c.alter == nil {
		return
	}
	for i, w := range ws {
		if j, ok := c.alter.written[w.Partition]; ok {
			c.alter.resp.Results[j] = AlterResult{Partition: w.Partition, State: cloneState(w.State), PartitionEpoch: versions[i]}
		}
	}
}

// takeAlter returns the answer of the last alterStep; NOT_CONTROLLER if
// the controller resigned meanwhile (a fenced write).
func (c *Core) takeAlter() AlterResponse {
	st := c.alter
	c.alter = nil
	if st == nil || !c.active {
		return AlterResponse{Error: CodeNotController}
	}
	return st.resp
}

// AlterPartition runs req through the loop and returns the answer (a
// broker's AlterPartition handler blocks on it).
func (c *Controller) AlterPartition(done <-chan struct{}, req AlterRequest) AlterResponse {
	resp := AlterResponse{Error: CodeNotController}
	c.submit(done, true, func() Event {
		c.step(alterPartition{req}, false)
		resp = c.core.takeAlter()
		if resp.Error == CodeNone {
			// An ISR expansion may complete a reassignment (reassign.go).
			c.step(reassignCheck{}, false)
		}
		return nil
	})
	return resp
}
