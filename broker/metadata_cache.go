package broker

import (
	"context"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataCache is what the controller's UpdateMetadata requests told
// this broker (Kafka's ZkMetadataCache): the live brokers with their
// endpoints, and each partition's replicas, leader, leader epoch, ISR and
// offline replicas. Metadata and DescribeCluster answer from it, so every
// broker tells clients the controller's view, not what its own watches
// happened to see.
type metadataCache struct {
	mu sync.RWMutex
	// ready is set by the first UpdateMetadata.
	ready      bool
	controller int32
	brokers    map[int32]brokerInfo
	// topics by name. Invariant: every partition in them has a leader
	// other than leaderDuringDelete (those are removed).
	topics map[string]*cachedTopic
	// changed is closed (and cleared) by the next update; waitFor's
	// waiters hold it.
	changed chan struct{}
}

// cachedTopic is one topic of the metadata cache.
type cachedTopic struct {
	id    [16]byte
	parts map[int32]cachedPartition
}

// cachedPartition is a partition's state as the controller sent it.
type cachedPartition struct {
	leader, leaderEpoch    int32
	replicas, isr, offline []int32
}

// leaderDuringDelete is the leader of a partition whose topic is being
// deleted (Kafka's LeaderAndIsr.LeaderDuringDelete): the cache drops it.
const leaderDuringDelete = -2

// securityProtocolPlaintext is Kafka's id of PLAINTEXT in UpdateMetadata.
const securityProtocolPlaintext = 0

// update applies one UpdateMetadata: the live brokers are replaced, the
// partitions named are set (or dropped, leader -2).
func (mc *metadataCache) update(req *kmsg.UpdateMetadataRequest) {
	brokers := make(map[int32]brokerInfo, len(req.LiveBrokers))
	for _, lb := range req.LiveBrokers {
		// v1+ carries host and port in the endpoints only: those of the
		// PLAINTEXT listener, else the first, as the registration's.
		info := brokerInfo{id: lb.ID, host: lb.Host, port: lb.Port, endpoints: map[string]hostPort{}}
		if lb.Rack != nil {
			info.rack = *lb.Rack
		}
		plaintext := false
		for i, ep := range lb.Endpoints {
			info.endpoints[ep.ListenerName] = hostPort{ep.Host, ep.Port}
			if i == 0 || !plaintext && ep.SecurityProtocol == securityProtocolPlaintext {
				info.host, info.port = ep.Host, ep.Port
				plaintext = ep.SecurityProtocol == securityProtocolPlaintext
			}
		}
		brokers[lb.ID] = info
	}
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.topics == nil {
		mc.topics = map[string]*cachedTopic{}
	}
	mc.ready, mc.controller, mc.brokers = true, req.ControllerID, brokers
	if mc.changed != nil {
		close(mc.changed)
		mc.changed = nil
	}
	for _, ts := range req.TopicStates {
		old := mc.topics[ts.Topic]
		t := &cachedTopic{id: ts.TopicID, parts: map[int32]cachedPartition{}}
		if old != nil && old.id == ts.TopicID {
			for p, cp := range old.parts {
				t.parts[p] = cp
			}
		}
		for _, ps := range ts.PartitionStates {
			if ps.Leader == leaderDuringDelete {
				delete(t.parts, ps.Partition)
				continue
			}
			t.parts[ps.Partition] = cachedPartition{leader: ps.Leader, leaderEpoch: ps.LeaderEpoch,
				replicas: ps.Replicas, isr: ps.ISR, offline: ps.OfflineReplicas}
		}
		if len(t.parts) == 0 {
			delete(mc.topics, ts.Topic)
		} else {
			mc.topics[ts.Topic] = t
		}
	}
}

// isReady reports whether an UpdateMetadata has arrived.
func (mc *metadataCache) isReady() bool {
	mc.mu.RLock()
	defer mc.mu.RUnlock()
	return mc.ready
}

// liveBrokers returns the live brokers sorted by id.
func (mc *metadataCache) liveBrokers() []brokerInfo {
	mc.mu.RLock()
	out := make([]brokerInfo, 0, len(mc.brokers))
	for _, b := range mc.brokers {
		out = append(out, b)
	}
	mc.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// broker returns a live broker's registration.
func (mc *metadataCache) broker(id int32) (brokerInfo, bool) {
	mc.mu.RLock()
	defer mc.mu.RUnlock()
	b, ok := mc.brokers[id]
	return b, ok
}

// topic returns the partitions of a topic, by index (nil when the cache
// does not know it), and its id.
func (mc *metadataCache) topic(name string) (id [16]byte, parts []cachedPartition, ok bool) {
	mc.mu.RLock()
	defer mc.mu.RUnlock()
	t := mc.topics[name]
	if t == nil {
		return id, nil, false
	}
	parts = make([]cachedPartition, len(t.parts))
	for p, cp := range t.parts {
		if int(p) < len(parts) {
			parts[p] = cp
		}
	}
	return t.id, parts, true
}

// controllerID is the controller that sent the last UpdateMetadata (-1
// before the first).
func (mc *metadataCache) controllerID() int32 {
	mc.mu.RLock()
	defer mc.mu.RUnlock()
	if !mc.ready {
		return -1
	}
	return mc.controller
}

// isLive reports whether broker id is live.
func (mc *metadataCache) isLive(id int32) bool {
	mc.mu.RLock()
	defer mc.mu.RUnlock()
	_, ok := mc.brokers[id]
	return ok
}

// topicNames returns the topics' names, sorted.
func (mc *metadataCache) topicNames() []string {
	mc.mu.RLock()
	out := make([]string, 0, len(mc.topics))
	for name := range mc.topics {
		out = append(out, name)
	}
	mc.mu.RUnlock()
	sort.Strings(out)
	return out
}

// topicByID returns the name of the topic with this id.
func (mc *metadataCache) topicByID(id [16]byte) (string, bool) {
	mc.mu.RLock()
	defer mc.mu.RUnlock()
	for name, t := range mc.topics {
		if t.id == id {
			return name, true
		}
	}
	return "", false
}

// waitFor waits until cond (which reads the cache) holds, re-checking it
// after each update, or until ctx ends or done closes; it reports whether
// cond held.
func (mc *metadataCache) waitFor(ctx context.Context, done <-chan struct{}, cond func() bool) bool {
	for {
		mc.mu.Lock()
		if mc.changed == nil {
			mc.changed = make(chan struct{})
		}
		ch := mc.changed
		mc.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		case <-done:
			return false
		}
	}
}

// hasLeaders reports whether the cache has topic name with n partitions,
// each with a leader (what CreateTopics and CreatePartitions wait for, as
// Kafka's DelayedCreatePartitions).
func (mc *metadataCache) hasLeaders(name string, n int) bool {
	_, parts, ok := mc.topic(name)
	if !ok || len(parts) < n {
		return false
	}
	for _, p := range parts {
		if p.leader < 0 {
			return false
		}
	}
	return true
}
