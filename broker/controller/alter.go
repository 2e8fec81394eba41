package controller

import (
	"errors"
	"slices"

	"github.com/go-zookeeper/zk"
)

// AlterPartition (KIP-497): a partition leader asks to change its ISR.
// Core decides each partition as Kafka's ZooKeeper-mode controller does
// (KafkaController.processAlterPartition); the loop writes each accepted
// partition with a CAS on its state znode's version (the partition
// epoch) and answers with the new state or the error.

// Kafka error codes of AlterPartition answers.
const (
	ErrNone                    int16 = 0
	ErrUnknownTopicOrPartition int16 = 3
	ErrNotController           int16 = 41
	ErrStaleBrokerEpoch        int16 = 77
	ErrFencedLeaderEpoch       int16 = 74
	ErrInvalidUpdateVersion    int16 = 95
	ErrIneligibleReplica       int16 = 107
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

// AlterRequest is an AlterPartition request from broker (with its broker
// epoch, -1 when not checked).
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
		return Effects{}, nil, ErrNotController
	}
	if e, ok := c.live[req.Broker]; !ok || req.BrokerEpoch != -1 && e != req.BrokerEpoch {
		return Effects{}, nil, ErrStaleBrokerEpoch
	}
	for _, a := range req.Partitions {
		res := AlterResult{Partition: a.Partition}
		p := c.parts[a.Partition]
		switch {
		case p == nil || !p.HasState:
			res.Error = ErrUnknownTopicOrPartition
		case a.PartitionEpoch > p.ZkVersion || a.LeaderEpoch > p.State.LeaderEpoch:
			// The leader knows a newer state than this controller: likely
			// no longer the controller.
			res.Error = ErrNotController
		case a.LeaderEpoch < p.State.LeaderEpoch:
			res.Error = ErrFencedLeaderEpoch
		case sameMembers(a.ISR, p.State.ISR):
			res.State, res.PartitionEpoch = cloneState(p.State), p.ZkVersion // already so: idempotent
		case a.PartitionEpoch < p.ZkVersion:
			res.Error = ErrInvalidUpdateVersion
		case slices.ContainsFunc(a.ISR, func(id int32) bool { return !c.isLive(id) }) || len(a.ISR) == 0:
			res.Error = ErrIneligibleReplica
		default:
			c.write(&eff, a.Partition, LeaderAndISR{Leader: p.State.Leader, LeaderEpoch: p.State.LeaderEpoch, ISR: a.ISR})
			continue
		}
		results = append(results, res)
	}
	return eff, results, ErrNone
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

// AlterPartition runs req through the loop and returns the answer (a
// broker's AlterPartition handler blocks on it).
func (c *Controller) AlterPartition(done <-chan struct{}, req AlterRequest) AlterResponse {
	var resp AlterResponse
	resp.Error = ErrNotController
	c.submit(done, true, func() Event {
		resp = c.alter(req)
		return nil
	})
	return resp
}

// alter runs on the loop: decide, write each accepted partition on its
// own (so one failed CAS refuses that partition only), tell the brokers.
func (c *Controller) alter(req AlterRequest) AlterResponse {
	eff, results, topErr := c.core.AlterPartition(req)
	if topErr != ErrNone {
		return AlterResponse{Error: topErr}
	}
	_, _, version := c.core.Active()
	var written []PartitionID
	for _, w := range eff.Writes {
		res := AlterResult{Partition: w.Partition}
		versions, err := c.store.WriteStates(version, []StateWrite{w})
		switch {
		case errors.Is(err, ErrFenced):
			c.log.Warn("controller: fenced by a newer controller; resigning")
			c.step(Resigned{}, false)
			return AlterResponse{Error: ErrNotController}
		case err != nil:
			if !errors.Is(err, zk.ErrBadVersion) {
				c.log.Warn("controller: writing an ISR change", "partition", w.Partition, "err", err)
			}
			res.Error = ErrInvalidUpdateVersion
			if ts, rerr := c.store.Topics([]string{w.Partition.Topic}); rerr == nil {
				c.core.readTopics(ts)
			}
		default:
			c.core.Step(StatesWritten{Writes: []StateWrite{w}, Versions: versions})
			res.State, res.PartitionEpoch = cloneState(w.State), versions[0]
			written = append(written, w.Partition)
		}
		results = append(results, res)
	}
	if len(written) > 0 && c.notify != nil {
		c.notify(written)
	}
	return AlterResponse{Results: results}
}
