package broker

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The leader's side of AlterPartition (Kafka's AlterPartitionManager): a
// partition that wants its ISR changed is queued (isrChanged); one
// goroutine sends the queued proposals to the controller's inter-broker
// listener, one request at a time, and hands each answer back to its
// partition. A proposal whose request failed (no controller, connection
// lost, NOT_CONTROLLER) is sent again after a pause; one the controller
// refused is dropped, and the partition proposes again from the state
// its watch brings.

// isrChanged queues part's pending ISR change (partition.onISRChange;
// called with part.mu held, so it only queues).
func (b *Broker) isrChanged(part *partition) {
	b.repl.isr.Lock()
	b.repl.isr.pending[part] = true
	b.repl.isr.Unlock()
	select {
	case b.repl.isrWake <- struct{}{}:
	default:
	}
}

func (b *Broker) isrSendLoop() {
	var cl *kgo.Client
	var clAddr string
	defer func() {
		if cl != nil {
			cl.Close()
		}
	}()
	retry := false
	for {
		wait := time.Hour
		if retry {
			wait = 100 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-b.done:
			t.Stop()
			return
		case <-b.repl.isrWake:
		case <-t.C:
		}
		t.Stop()
		// Taken off the queue now: a proposal made while this request is
		// in flight queues its partition again.
		b.repl.isr.Lock()
		parts := make([]*partition, 0, len(b.repl.isr.pending))
		for p := range b.repl.isr.pending {
			parts = append(parts, p)
		}
		clear(b.repl.isr.pending)
		b.repl.isr.Unlock()
		if len(parts) == 0 {
			retry = false
			continue
		}
		addr, ok := b.interBrokerAddr(b.cluster.controllerID())
		if !ok {
			b.requeueISR(parts)
			retry = true
			continue
		}
		if cl == nil || clAddr != addr {
			if cl != nil {
				cl.Close()
			}
			var err error
			opts := append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("zkafka-alter-partition"), kgo.RequestRetries(0)}, b.interBrokerClientOpts()...)
			if cl, err = kgo.NewClient(opts...); err != nil {
				cl = nil
				b.requeueISR(parts)
				retry = true
				continue
			}
			clAddr = addr
		}
		if retry = !b.sendISRChanges(cl, parts); retry {
			b.requeueISR(parts)
		}
	}
}

// requeueISR puts back partitions whose proposals were not answered.
func (b *Broker) requeueISR(parts []*partition) {
	b.repl.isr.Lock()
	for _, p := range parts {
		b.repl.isr.pending[p] = true
	}
	b.repl.isr.Unlock()
}

// proposal is one partition's pending ISR in a request.
type proposal struct {
	part           *partition
	epoch          int32
	isr            []int32
	partitionEpoch int32
}

// sendISRChanges sends one AlterPartition with parts' proposals and
// applies the answers; false means send again later.
func (b *Broker) sendISRChanges(cl *kgo.Client, parts []*partition) bool {
	req, byKey := b.alterPartitionRequest(parts)
	if len(req.Topics) == 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		select {
		case <-b.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil || resp.ErrorCode != 0 {
		b.log.Debug("AlterPartition not answered; sending again", "err", err)
		return false
	}
	for _, rt := range resp.Topics {
		id := rt.TopidID // sic: kmsg spells it so
		if resp.Version < 2 {
			if t := b.cluster.topic(rt.Topic); t != nil {
				id = t.id
			}
		}
		for _, rp := range rt.Partitions {
			pr, ok := byKey[id][rp.Partition]
			if !ok {
				continue
			}
			if rp.ErrorCode != 0 {
				b.log.Info("ISR change refused by the controller", "topic", pr.part.topic, "partition", pr.part.index, "isr", pr.isr, "code", rp.ErrorCode)
			} else {
				b.log.Info("ISR changed", "topic", pr.part.topic, "partition", pr.part.index, "isr", rp.ISR, "partition_epoch", rp.PartitionEpoch)
			}
			pr.part.isrAnswered(pr.epoch, pr.isr, rp.ISR, rp.PartitionEpoch, rp.ErrorCode != 0)
			delete(byKey[id], rp.Partition)
		}
	}
	// Proposals the answer left out are dropped, to be made again.
	for _, m := range byKey {
		for _, pr := range m {
			pr.part.isrAnswered(pr.epoch, pr.isr, nil, 0, true)
		}
	}
	return true
}

// alterPartitionRequest builds the AlterPartition of parts' pending
// proposals, by topic id and partition. broker_epoch is this broker's
// registration's czxid as of now (a broker that registered again after
// losing its session sends the new one), so that the controller refuses
// a leader whose registration is stale with STALE_BROKER_EPOCH.
func (b *Broker) alterPartitionRequest(parts []*partition) (*kmsg.AlterPartitionRequest, map[[16]byte]map[int32]proposal) {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.BrokerID, req.BrokerEpoch = b.cfg.BrokerID, b.epochs.broker.Load()
	byKey := map[[16]byte]map[int32]proposal{}
	for _, p := range parts {
		epoch, isr, pe, ok := p.pendingISR()
		if !ok {
			continue
		}
		if byKey[p.topicID] == nil {
			byKey[p.topicID] = map[int32]proposal{}
			rt := kmsg.NewAlterPartitionRequestTopic()
			rt.Topic, rt.TopicID = p.topic, p.topicID
			req.Topics = append(req.Topics, rt)
		}
		byKey[p.topicID][p.index] = proposal{p, epoch, isr, pe}
		rp := kmsg.NewAlterPartitionRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch, rp.NewISR, rp.PartitionEpoch = p.index, epoch, isr, pe
		for _, id := range isr {
			e := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
			e.BrokerID = id
			rp.NewEpochISR = append(rp.NewEpochISR, e)
		}
		for i := range req.Topics {
			if req.Topics[i].TopicID == p.topicID {
				req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
			}
		}
	}
	return req, byKey
}
