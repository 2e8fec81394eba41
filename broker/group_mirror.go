package broker

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// The membership mirror: a coordinator's view of its groups written to
// ZooKeeper in the old consumer's layout, so tools that read it (zkCli,
// Kafka's old ConsumerOffsetChecker, `zkafka groups`) see who is in a
// group and who owns what:
//
//	/consumers/{group}/ids/{member id}                        ephemeral:  {"version":1,"subscription":{topic:1},"pattern":"static","timestamp":"ms"}
//	/consumers/{group}/owners/{topic}/{partition}             ephemeral:  the owning member id
//
// The nodes are ephemerals of this broker's session, so they go when it
// dies; the next coordinator writes its own.

type memberIDZNode struct {
	Version      int            `json:"version"`
	Subscription map[string]int `json:"subscription"`
	Pattern      string         `json:"pattern"`
	Timestamp    string         `json:"timestamp"`
}

// mirror writes group membership (/ids) and partition ownership
// (/owners) to ZooKeeper from one goroutine, in order. Callers publish
// the desired state (a snapshot, under group.mu); the worker diffs it
// with what it wrote and only the latest state of each group is written.
type mirror struct {
	b    *Broker
	kick chan struct{}

	mu struct {
		sync.Mutex
		ids    map[string]map[string][]byte         // group → member → znode data
		owners map[string]map[topicPartition]string // group → partition → member
		dirty  []string
	}
	// Worker only: what is in ZooKeeper now.
	hasIDs    map[string]map[string]bool
	hasOwners map[string]map[topicPartition]string
}

func newMirror(b *Broker) *mirror {
	m := &mirror{b: b, kick: make(chan struct{}, 1),
		hasIDs: map[string]map[string]bool{}, hasOwners: map[string]map[topicPartition]string{}}
	m.mu.ids = map[string]map[string][]byte{}
	m.mu.owners = map[string]map[topicPartition]string{}
	return m
}

func (m *mirror) markLocked(group string) {
	for _, d := range m.mu.dirty {
		if d == group {
			return
		}
	}
	m.mu.dirty = append(m.mu.dirty, group)
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// members publishes g's member list; g.mu must be held.
func (m *mirror) members(g *group) {
	want := make(map[string][]byte, len(g.members))
	for id, mem := range g.members {
		z := memberIDZNode{Version: 1, Subscription: map[string]int{}, Pattern: "static", Timestamp: zkmeta.NowMillisString()}
		if mem.protocolType == "consumer" && len(mem.protocols) > 0 {
			var md kmsg.ConsumerMemberMetadata
			if md.ReadFrom(mem.protocols[0].Metadata) == nil {
				for _, t := range md.Topics {
					z.Subscription[t] = 1
				}
			}
		}
		want[id] = zkmeta.MustJSON(z)
	}
	m.mu.Lock()
	m.mu.ids[g.name] = want
	m.markLocked(g.name)
	m.mu.Unlock()
}

// owners publishes g's partition owners (nil: none); g.mu must be held.
func (m *mirror) owners(g *group, owners map[topicPartition]string) {
	if owners == nil {
		owners = map[topicPartition]string{}
	}
	m.mu.Lock()
	m.mu.owners[g.name] = owners
	m.markLocked(g.name)
	m.mu.Unlock()
}

// forget removes everything written for a group.
func (m *mirror) forget(group string) {
	m.mu.Lock()
	m.mu.ids[group] = map[string][]byte{}
	m.mu.owners[group] = map[topicPartition]string{}
	m.markLocked(group)
	m.mu.Unlock()
}

func (m *mirror) run() {
	for {
		select {
		case <-m.kick:
		case <-m.b.done:
			return
		}
		m.mu.Lock()
		dirty := m.mu.dirty
		m.mu.dirty = nil
		type work struct {
			group  string
			ids    map[string][]byte
			owners map[topicPartition]string
		}
		var todo []work
		for _, g := range dirty {
			todo = append(todo, work{g, m.mu.ids[g], m.mu.owners[g]})
			delete(m.mu.ids, g)
			delete(m.mu.owners, g)
		}
		m.mu.Unlock()
		for _, w := range todo {
			if w.ids != nil {
				m.syncIDs(w.group, w.ids)
			}
			if w.owners != nil {
				m.syncOwners(w.group, w.owners)
			}
		}
	}
}

func (m *mirror) syncIDs(group string, want map[string][]byte) {
	z := m.b.zk
	has := m.hasIDs[group]
	if has == nil {
		has = map[string]bool{}
		m.hasIDs[group] = has
	}
	base := groupPath(group) + "/ids"
	for id := range has {
		if _, ok := want[id]; !ok {
			if err := z.Conn.Delete(z.Path(base+"/"+id), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				m.b.log.Warn("removing group member znode", "group", group, "member", id, "err", err)
				continue
			}
			delete(has, id)
		}
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		if !has[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := m.createEphemeral(base, id, want[id]); err != nil {
			m.b.log.Warn("writing group member znode", "group", group, "member", id, "err", err)
			continue
		}
		has[id] = true
	}
	if len(has) == 0 {
		delete(m.hasIDs, group)
	}
}

func (m *mirror) syncOwners(group string, want map[topicPartition]string) {
	z := m.b.zk
	has := m.hasOwners[group]
	if has == nil {
		has = map[topicPartition]string{}
		m.hasOwners[group] = has
	}
	for tp, owner := range has {
		if w, ok := want[tp]; !ok || w != owner {
			p := groupPath(group) + "/owners/" + tp.topic + "/" + strconv.Itoa(int(tp.partition))
			if err := z.Conn.Delete(z.Path(p), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				m.b.log.Warn("removing partition owner znode", "path", p, "err", err)
				continue
			}
			delete(has, tp)
		}
	}
	tps := make([]topicPartition, 0, len(want))
	for tp, owner := range want {
		if has[tp] != owner {
			tps = append(tps, tp)
		}
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].topic != tps[j].topic {
			return tps[i].topic < tps[j].topic
		}
		return tps[i].partition < tps[j].partition
	})
	for _, tp := range tps {
		base := groupPath(group) + "/owners/" + tp.topic
		if err := m.createEphemeral(base, strconv.Itoa(int(tp.partition)), []byte(want[tp])); err != nil {
			m.b.log.Warn("writing partition owner znode", "group", group, "topic", tp.topic, "partition", tp.partition, "err", err)
			continue
		}
		has[tp] = want[tp]
	}
	if len(has) == 0 {
		delete(m.hasOwners, group)
	}
}

// createEphemeral creates base/name as an ephemeral of this session,
// creating base's missing ancestors; a node left by an older session of
// ours (a restarted broker) is replaced.
func (m *mirror) createEphemeral(base, name string, data []byte) error {
	z := m.b.zk
	p := base + "/" + name
	for attempt := 0; attempt < 3; attempt++ {
		err := z.Create(p, data, zk.FlagEphemeral)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNoNode):
			if err := m.ensurePath(base); err != nil {
				return err
			}
		case errors.Is(err, zk.ErrNodeExists):
			if err := z.Conn.Delete(z.Path(p), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return err
			}
		default:
			return err
		}
	}
	return fmt.Errorf("creating %s: gave up", p)
}

// ensurePath creates p and its missing ancestors, persistent and empty.
func (m *mirror) ensurePath(p string) error {
	z := m.b.zk
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if err := z.Create(p[:i], nil, 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
		}
	}
	return nil
}

// ownersLocked decodes the consumer protocol assignments: partition →
// member id. Nil for other protocol types. g.mu held.
func (g *group) ownersLocked() map[topicPartition]string {
	if g.protocolType != "consumer" {
		return nil
	}
	out := map[topicPartition]string{}
	for _, m := range g.members {
		var a kmsg.ConsumerMemberAssignment
		if len(m.assignment) == 0 || a.ReadFrom(m.assignment) != nil {
			continue
		}
		for _, t := range a.Topics {
			for _, p := range t.Partitions {
				out[topicPartition{t.Topic, p}] = m.id
			}
		}
	}
	return out
}
