package controller

import (
	"errors"
	"slices"
)

// Controlled shutdown (Kafka's KafkaController.doControlledShutdown): a
// broker about to stop asks the controller to move leadership off it
// first, so that clients lose nothing but a leader they are told to leave.
//
//	ControlledShutdown{B}:  B is shutting down (never elected again, until
//	                        it registers anew or dies)
//	  partitions B leads (RF > 1):   leader = first replica in assignment
//	                                 order that is live, not shutting down
//	                                 and in the ISR; ISR minus the brokers
//	                                 shutting down; epoch+1. None: B keeps it.
//	  partitions B follows (RF > 1): B leaves the ISR (never its last
//	                                 member), epoch+1; StopReplica (no
//	                                 delete) to B
//	  answer:                        the partitions B still leads (RF > 1)
//
// The broker asks again until none remain or its retries run out.

// ControlledShutdown: broker Broker, registered with epoch BrokerEpoch,
// asks to shut down.
type ControlledShutdown struct {
	Broker      int32
	BrokerEpoch int64
}

func (ControlledShutdown) isEvent() {}

// The errors of a controlled shutdown's answer.
var (
	ErrNotController      = errors.New("controller: this broker is not the controller")
	ErrBrokerNotAvailable = errors.New("controller: the broker is not registered")
	ErrStaleBrokerEpoch   = errors.New("controller: the broker epoch is stale")
)

// shutdownRefused is why Core does not act on a controlled shutdown
// request (nil: it acts): Kafka refuses an unknown broker and an epoch
// older than the registration's (-1, a broker before KIP-380, passes).
func (c *Core) shutdownRefused(id int32, epoch int64) error {
	cur, ok := c.live[id]
	switch {
	case !c.active:
		return ErrNotController
	case !ok:
		return ErrBrokerNotAvailable
	case epoch != -1 && epoch < cur:
		return ErrStaleBrokerEpoch
	}
	return nil
}

// controlledShutdown moves leadership off a broker that shuts down and
// takes it out of the ISRs it is in.
func (c *Core) controlledShutdown(ev ControlledShutdown) Effects {
	var eff Effects
	if c.shutdownRefused(ev.Broker, ev.BrokerEpoch) != nil {
		return eff
	}
	c.shuttingDown[ev.Broker] = true
	for _, id := range c.sortedIDs() {
		p := c.parts[id]
		if !p.HasState || len(p.Replicas) < 2 || !slices.Contains(p.Replicas, ev.Broker) {
			continue
		}
		cur := p.State
		if cur.Leader == ev.Broker {
			if next, ok := c.shutdownLeader(p.Replicas, cur); ok {
				c.write(&eff, id, next)
			}
			continue
		}
		if next, ok := removeReplica(cur, ev.Broker); ok && len(next.ISR) < len(cur.ISR) {
			c.write(&eff, id, next)
		}
		c.batch.stop(ev.Broker, id)
	}
	return eff
}

// shutdownLeader is Kafka's ControlledShutdownPartitionLeaderElection.
func (c *Core) shutdownLeader(replicas []int32, cur LeaderAndISR) (LeaderAndISR, bool) {
	for _, r := range replicas {
		if c.isLive(r) && slices.Contains(cur.ISR, r) {
			isr := slices.DeleteFunc(slices.Clone(cur.ISR), func(id int32) bool { return c.shuttingDown[id] })
			return LeaderAndISR{Leader: r, LeaderEpoch: cur.LeaderEpoch + 1, ISR: isr}, true
		}
	}
	return LeaderAndISR{}, false
}

// ShutdownAnswer is the answer to broker id's controlled shutdown, once
// its step is done: the partitions it still leads (of more than one
// replica), or why it was refused.
func (c *Core) ShutdownAnswer(id int32, epoch int64) ([]PartitionID, error) {
	if err := c.shutdownRefused(id, epoch); err != nil {
		return nil, err
	}
	var out []PartitionID
	for _, pid := range c.sortedIDs() {
		if p := c.parts[pid]; p.HasState && len(p.Replicas) > 1 && p.State.Leader == id {
			out = append(out, pid)
		}
	}
	return out, nil
}

// forgetShutdowns clears, before ev is applied, the brokers shutting
// down that ev says died or registered again (a new controller starts
// with none).
func (c *Core) forgetShutdowns(ev Event) {
	switch ev := ev.(type) {
	case Elected:
		clear(c.shuttingDown)
	case BrokersChanged:
		for id := range c.shuttingDown {
			if e, ok := ev.Brokers[id]; !ok || e != c.live[id] {
				delete(c.shuttingDown, id)
			}
		}
	}
}

// ControlledShutdown asks the loop to move leadership off broker id
// (registered with epoch) and returns, once the states are written and the
// requests queued, the partitions it still leads; ErrNotController when
// this broker is not the controller (or done closed first).
func (c *Controller) ControlledShutdown(done <-chan struct{}, id int32, epoch int64) ([]PartitionID, error) {
	type answer struct {
		remaining []PartitionID
		err       error
	}
	ch := make(chan answer, 1)
	c.submitRequest(done, false, request{
		read: func() Event { return ControlledShutdown{Broker: id, BrokerEpoch: epoch} },
		after: func() {
			r, err := c.core.ShutdownAnswer(id, epoch)
			ch <- answer{r, err}
		},
	})
	select {
	case a := <-ch:
		return a.remaining, a.err
	case <-done:
		return nil, ErrNotController
	}
}
