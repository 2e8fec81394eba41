package broker

import (
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// Until the controller sends LeaderAndIsr requests, a broker learns that
// the controller moved a partition's leadership or changed its ISR by
// watching the state znodes of the partitions it hosts a replica of: a
// change re-reads the topic, and applyTopic gives each local replica its
// new role (leader, follower of the new leader) or ISR.

type stateWatchKey struct {
	topic     string
	partition int
}

// watchStates starts a watch on every state znode of t that names this
// broker among the replicas and has none yet. Called by applyTopic.
func (b *Broker) watchStates(t *topic) {
	for p, replicas := range t.replicas {
		if !containsID(replicas, b.cfg.BrokerID) {
			continue
		}
		k := stateWatchKey{t.name, p}
		b.stateWatches.Lock()
		if b.stateWatches.m == nil {
			b.stateWatches.m = map[stateWatchKey]bool{}
		}
		started := b.stateWatches.m[k]
		b.stateWatches.m[k] = true
		b.stateWatches.Unlock()
		if !started && !b.goTracked("zk-state-watch", func() { b.stateWatchLoop(k) }) {
			return
		}
	}
}

// stateWatchLoop follows one state znode until its topic is gone.
func (b *Broker) stateWatchLoop(k stateWatchKey) {
	defer func() {
		b.stateWatches.Lock()
		delete(b.stateWatches.m, k)
		b.stateWatches.Unlock()
	}()
	path := zkmeta.StatePath(k.topic, k.partition)
	for {
		ok, st, ch, err := b.zk.Conn.ExistsW(b.zk.Path(path))
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			if !b.sleep(time.Second) {
				return
			}
			continue
		}
		t := b.cluster.topic(k.topic)
		if t == nil || k.partition >= len(t.replicas) {
			return
		}
		// Re-read when the znode is not what the cache was built from:
		// it changed, or was created after the topic was read and
		// before this watch was set (a watch set on it now would not
		// fire for that).
		if cached := t.zkVersions[k.partition]; ok && st.Version != cached {
			if err := b.reloadTopic(k.topic); err != nil {
				b.log.Warn("reloading topic after a state change", "topic", k.topic, "err", err)
			}
		}
		select {
		case ev := <-ch:
			if ev.Type == zk.EventNodeDeleted {
				// Only a topic deletion removes a state znode; the
				// topics watch drops the topic (a re-read here could
				// publish it again from a half-deleted tree).
				return
			}
		case <-b.done:
			return
		}
	}
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
