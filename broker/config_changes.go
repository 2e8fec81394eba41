package broker

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zkafka/zkafka/broker/zkmeta"
)

// The config change notifications, as Kafka's ZooKeeper mode has them
// (ZkNodeChangeNotificationListener): an alter writes the entity's config
// znode and a persistent sequential /config/changes/config_change_N
// naming the entity; every broker watches /config/changes, handles the
// notifications newer than the last it handled by reloading the named
// topic (reloadTopic: the open partitions take the new config), user
// (its SCRAM credentials, scram_store.go, and its quotas), client id or
// (user, client id) (their quotas, quota_store.go) or broker (this one's or the
// default's dynamic configs, dynamic_config.go), and
// deletes the ones older than configChangeExpiry. At start it handles
// every one still there, as Kafka does.

const configChangeExpiry = 15 * time.Minute

// configChangesLoop follows /config/changes until Shutdown.
func (b *Broker) configChangesLoop() {
	last := int64(-1)
	for {
		names, ch, err := b.zk.ChildrenW(zkmeta.ConfigChangesPath)
		if err != nil {
			if !b.sleep(time.Second) {
				return
			}
			continue
		}
		last = b.handleConfigChanges(names, last)
		select {
		case <-ch:
		case <-b.done:
			return
		}
	}
}

// handleConfigChanges handles the notifications after last, in sequence
// order, and returns the last sequence handled.
func (b *Broker) handleConfigChanges(names []string, last int64) int64 {
	type note struct {
		name string
		seq  int64
	}
	var notes []note
	for _, n := range names {
		s, ok := strings.CutPrefix(n, "config_change_")
		if seq, err := strconv.ParseInt(s, 10, 64); ok && err == nil {
			notes = append(notes, note{n, seq})
		}
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].seq < notes[j].seq })
	reloaded := map[string]bool{}
	for _, n := range notes {
		path := zkmeta.ConfigChangesPath + "/" + n.name
		data, st, err := b.zk.Get(path)
		if err != nil {
			continue // purged by another broker
		}
		if time.Since(time.UnixMilli(st.Ctime)) > configChangeExpiry {
			b.zk.Conn.Delete(b.zk.Path(path), -1)
		}
		if n.seq <= last {
			continue
		}
		last = n.seq
		if b.changedBroker(data) {
			b.reloadDynamicConfigs()
		}
		if user, ok := changedUser(data); ok {
			b.scram.reload(user)
		}
		if e, ok := changedQuotaEntity(data); ok {
			b.reloadQuota(e)
		}
		if topic, ok := changedTopic(data); ok && !reloaded[topic] && b.cluster.topic(topic) != nil {
			reloaded[topic] = true
			if err := b.reloadTopic(topic); err != nil {
				b.log.Warn("reloading altered topic config", "topic", topic, "err", err)
			}
		}
	}
	return last
}

// changedTopic is the topic a notification names (users and clients:
// changedUser, changedQuotaEntity).
func changedTopic(data []byte) (string, bool) {
	var z zkmeta.ConfigChangeZNode
	if json.Unmarshal(data, &z) != nil {
		return "", false
	}
	if z.Version == 1 {
		return z.EntityName, z.EntityType == "topics" && z.EntityName != ""
	}
	name, ok := strings.CutPrefix(z.EntityPath, "topics/")
	return name, ok && name != ""
}
