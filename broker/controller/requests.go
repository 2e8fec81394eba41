package controller

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The controller's requests in Kafka's protocol (kmsg), built by the loop
// from Core's state after a step's writes landed: LeaderAndIsr v7,
// UpdateMetadata v8 and StopReplica v4, each carrying controller_id,
// controller_epoch and the target's broker_epoch (the czxid of its
// /brokers/ids/{id}), which the broker checks.

// Channels carries the controller's requests to the brokers: one queue
// per live broker with one request in flight, retried until it is
// answered or the broker's queue goes (Kafka's ControllerChannelManager;
// ChannelManager is the real one). Only the loop calls it.
type Channels interface {
	// SetBrokers makes the queues match the live brokers: a new broker,
	// or one registered again with a newer epoch, gets a new queue; a
	// broker gone loses its queue and what it held.
	SetBrokers(brokers map[int32]BrokerInfo)
	// Enqueue queues req for broker to (dropped if it has no queue).
	Enqueue(to int32, req kmsg.Request)
}

// leaderDuringDelete and epochDuringDelete are Kafka's LeaderAndIsr
// markers of a partition whose topic is being deleted.
const (
	leaderDuringDelete int32 = -2
	epochDuringDelete  int32 = -2
)

// send builds and queues the step's requests.
func (c *Controller) send(sends []Send) {
	if c.channels == nil || len(sends) == 0 {
		return
	}
	_, epoch, _ := c.core.Active()
	for _, s := range sends {
		brokerEpoch, ok := c.core.Broker(s.To)
		if !ok {
			continue
		}
		var req kmsg.Request
		switch s.Kind {
		case LeaderAndIsr:
			req = c.leaderAndIsr(s, epoch, brokerEpoch)
		case UpdateMetadata:
			req = c.updateMetadata(s, epoch, brokerEpoch)
		case StopReplica:
			req = c.stopReplica(s, epoch, brokerEpoch)
		}
		c.channels.Enqueue(s.To, req)
	}
}

func (c *Controller) leaderAndIsr(s Send, epoch int32, brokerEpoch int64) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = 7
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = c.cfg.BrokerID, epoch, brokerEpoch
	leaders := map[int32]bool{}
	for _, id := range s.Partitions {
		p, ok := c.core.Partition(id)
		if !ok {
			continue
		}
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Partition, ps.ControllerEpoch = id.Partition, p.State.ControllerEpoch
		ps.Leader, ps.LeaderEpoch, ps.ISR = p.State.Leader, p.State.LeaderEpoch, nonNil(p.State.ISR)
		ps.ZKVersion, ps.Replicas, ps.IsNew = p.ZkVersion, nonNil(p.Replicas), slices.Contains(s.New, id)
		ps.AddingReplicas, ps.RemovingReplicas = nonNil(p.Adding), nonNil(p.Removing)
		ts := topicState(&req.TopicStates, id.Topic, p.TopicID)
		ts.PartitionStates = append(ts.PartitionStates, ps)
		if p.State.Leader >= 0 {
			leaders[p.State.Leader] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(leaders)) {
		if ep, ok := c.brokers[id].Endpoint(c.cfg.Listener); ok {
			ll := kmsg.NewLeaderAndISRRequestLiveLeader()
			ll.BrokerID, ll.Host, ll.Port = id, ep.Host, ep.Port
			req.LiveLeaders = append(req.LiveLeaders, ll)
		}
	}
	return req
}

func topicState(ts *[]kmsg.LeaderAndISRRequestTopicState, topic string, id [16]byte) *kmsg.LeaderAndISRRequestTopicState {
	if n := len(*ts); n > 0 && (*ts)[n-1].Topic == topic {
		return &(*ts)[n-1]
	}
	t := kmsg.NewLeaderAndISRRequestTopicState()
	t.Topic, t.TopicID = topic, id
	*ts = append(*ts, t)
	return &(*ts)[len(*ts)-1]
}

func (c *Controller) updateMetadata(s Send, epoch int32, brokerEpoch int64) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = 8
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = c.cfg.BrokerID, epoch, brokerEpoch
	parts := s.Partitions
	if s.All {
		parts = c.core.AllPartitions()
	}
	for _, id := range parts {
		p, ok := c.core.Partition(id)
		if !ok {
			continue
		}
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Partition, ps.ControllerEpoch = id.Partition, p.State.ControllerEpoch
		ps.Leader, ps.LeaderEpoch, ps.ISR = p.State.Leader, p.State.LeaderEpoch, nonNil(p.State.ISR)
		ps.ZKVersion, ps.Replicas = p.ZkVersion, nonNil(p.Replicas)
		if !p.HasState {
			ps.Leader, ps.ControllerEpoch = NoLeader, epoch // never had a live replica
		}
		ps.OfflineReplicas = []int32{}
		for _, r := range p.Replicas {
			if _, live := c.core.Broker(r); !live {
				ps.OfflineReplicas = append(ps.OfflineReplicas, r)
			}
		}
		t := umTopic(&req.TopicStates, id.Topic, p.TopicID)
		t.PartitionStates = append(t.PartitionStates, ps)
	}
	for _, id := range s.Deleted {
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Partition, ps.ControllerEpoch, ps.Leader, ps.LeaderEpoch = id.Partition, epoch, leaderDuringDelete, epochDuringDelete
		ps.ISR, ps.Replicas, ps.OfflineReplicas = []int32{}, []int32{}, []int32{}
		t := umTopic(&req.TopicStates, id.Topic, [16]byte{})
		t.PartitionStates = append(t.PartitionStates, ps)
	}
	for _, id := range slices.Sorted(maps.Keys(c.brokers)) {
		if _, live := c.core.Broker(id); !live {
			continue
		}
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = id
		if r := c.brokers[id].Rack; r != "" {
			lb.Rack = &r
		}
		for _, ep := range c.brokers[id].Endpoints {
			e := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			e.Host, e.Port, e.ListenerName, e.SecurityProtocol = ep.Host, ep.Port, ep.Listener, securityProtocolID(ep.Protocol)
			lb.Endpoints = append(lb.Endpoints, e)
		}
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	return req
}

func umTopic(ts *[]kmsg.UpdateMetadataRequestTopicState, topic string, id [16]byte) *kmsg.UpdateMetadataRequestTopicState {
	if n := len(*ts); n > 0 && (*ts)[n-1].Topic == topic {
		return &(*ts)[n-1]
	}
	t := kmsg.NewUpdateMetadataRequestTopicState()
	t.Topic, t.TopicID = topic, id
	*ts = append(*ts, t)
	return &(*ts)[len(*ts)-1]
}

func (c *Controller) stopReplica(s Send, epoch int32, brokerEpoch int64) *kmsg.StopReplicaRequest {
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = 4
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = c.cfg.BrokerID, epoch, brokerEpoch
	for _, id := range s.Partitions {
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != id.Topic {
			t := kmsg.NewStopReplicaRequestTopic()
			t.Topic = id.Topic
			req.Topics = append(req.Topics, t)
		}
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition, ps.Delete = id.Partition, s.Delete
		// A deletion carries the deletion marker, a stop the current epoch.
		ps.LeaderEpoch = epochDuringDelete
		if p, ok := c.core.Partition(id); ok && !s.Delete {
			ps.LeaderEpoch = p.State.LeaderEpoch
		}
		t := &req.Topics[len(req.Topics)-1]
		t.PartitionStates = append(t.PartitionStates, ps)
	}
	return req
}

func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}
