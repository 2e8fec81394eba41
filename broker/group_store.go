package broker

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// Committed offsets in ZooKeeper, in the layout of DESIGN.md (the
// membership mirror, /ids and /owners, is group_mirror.go):
//
//	/consumers/{group}                                        persistent, empty
//	/consumers/{group}/offsets/{topic}/{partition}            persistent: the offset, plain decimal text
//	/consumers/{group}/offset-metadata/{topic}/{partition}    persistent: {"leader_epoch":N,"metadata":"…","commit_timestamp":ms}
//	/consumers/{group}/group-metadata                         persistent: Kafka's GroupMetadataValue v3 (group_records.go)
//
// Each OffsetCommit is written by one multi that creates missing parents,
// creates or sets every offset node and creates, sets or deletes its
// metadata node (present only when the commit carries a leader epoch or
// metadata). A group has at most one commit multi in flight: commits that
// arrive meanwhile queue, and the next multi carries all of them (a
// partition committed twice is written once, with the later offset), so
// every request is still all-or-nothing in exactly one multi, and
// concurrent committers cost one ZooKeeper write per round trip instead
// of one each. The in-memory offset takes a result only if its znode
// mzxid is newer than the one applied.

func groupPath(g string) string { return "/consumers/" + g }
func offsetsTopicPath(g, t string) string {
	return "/consumers/" + g + "/offsets/" + t
}
func offsetPath(g string, tp topicPartition) string {
	return offsetsTopicPath(g, tp.topic) + "/" + strconv.Itoa(int(tp.partition))
}
func offsetMetaTopicPath(g, t string) string {
	return "/consumers/" + g + "/offset-metadata/" + t
}
func offsetMetaPath(g string, tp topicPartition) string {
	return offsetMetaTopicPath(g, tp.topic) + "/" + strconv.Itoa(int(tp.partition))
}

type offsetMetaZNode struct {
	LeaderEpoch     int32  `json:"leader_epoch"`
	Metadata        string `json:"metadata"`
	CommitTimestamp int64  `json:"commit_timestamp"`
}

// loadGroup reads a group's offsets from ZooKeeper; nil when
// /consumers/{name} does not exist.
func (c *coordinator) loadGroup(name string) (*group, error) {
	z := c.b.zk
	if ok, err := z.Exists(groupPath(name)); err != nil || !ok {
		return nil, err
	}
	g := c.newGroup(name)
	g.znodes[groupPath(name)] = true
	if err := c.loadGroupMetadata(g); err != nil {
		return nil, err
	}
	var newest time.Time
	topics, err := z.Children(groupPath(name) + "/offsets")
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	if err == nil {
		g.znodes[groupPath(name)+"/offsets"] = true
	}
	for _, t := range topics {
		parts, err := z.Children(offsetsTopicPath(name, t))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		} else if err != nil {
			return nil, err
		}
		g.znodes[offsetsTopicPath(name, t)] = true
		for _, ps := range parts {
			p, err := strconv.ParseInt(ps, 10, 32)
			if err != nil {
				continue
			}
			tp := topicPartition{t, int32(p)}
			data, st, err := z.Get(offsetPath(name, tp))
			if errors.Is(err, zk.ErrNoNode) {
				continue
			} else if err != nil {
				return nil, err
			}
			off, err := strconv.ParseInt(string(data), 10, 64)
			if err != nil {
				c.b.log.Warn("ignoring unparsable committed offset", "path", offsetPath(name, tp), "data", string(data))
				continue
			}
			co := &committedOffset{offset: off, leaderEpoch: -1, commitTime: time.UnixMilli(st.Mtime), mzxid: st.Mzxid}
			g.znodes[offsetPath(name, tp)] = true
			if md, _, err := z.Get(offsetMetaPath(name, tp)); err == nil {
				var m offsetMetaZNode
				if json.Unmarshal(md, &m) == nil {
					co.leaderEpoch, co.metadata, co.hasMeta = m.LeaderEpoch, m.Metadata, true
					if m.CommitTimestamp > 0 {
						co.commitTime = time.UnixMilli(m.CommitTimestamp)
					}
					g.znodes[offsetMetaPath(name, tp)] = true
					g.znodes[offsetMetaTopicPath(name, t)] = true
					g.znodes[groupPath(name)+"/offset-metadata"] = true
				}
			}
			if co.commitTime.After(newest) {
				newest = co.commitTime
			}
			g.offsets[tp] = co
		}
	}
	if !newest.IsZero() {
		g.emptySince = newest
	}
	return g, nil
}

// idleLocked reports whether nobody uses the group through this broker:
// Empty, no pending member ids, no commit queued or in flight. Its
// committed offsets may then be written by others straight into
// ZooKeeper (the ZooKeeper-coordinated consumer, `zkafka groups
// reset-offsets --zookeeper`, a person with zkCli).
func (g *group) idleLocked() bool {
	return g.state == groupEmpty && len(g.members) == 0 && len(g.pending) == 0 &&
		!g.committing && len(g.commitQueue) == 0
}

// refreshIdle re-reads an idle group's offsets from ZooKeeper, the store
// of record, before they are served (OffsetFetch) or expired. This is
// simpler than watching /consumers/{group}/offsets of every loaded group
// (a watch per topic and per partition, re-armed, and torn down when a
// member joins) and as fresh: a fetch sees every write ZooKeeper had
// applied when the fetch began. It changes nothing while the group is in
// use here, so the coordinator's invariants stand: a live generation's
// offsets are those committed through it, applied by mzxid. The reload
// is applied only if the group is still idle and no commit or delete
// changed its offsets meanwhile (offsetsSeq); otherwise memory, which is
// then at least as new, is served. A failed read serves memory too.
func (c *coordinator) refreshIdle(g *group) {
	g.mu.Lock()
	idle, seq := g.idleLocked(), g.offsetsSeq
	g.mu.Unlock()
	if !idle {
		return
	}
	fresh, err := c.loadGroup(g.name)
	if err != nil {
		c.b.log.Warn("re-reading group offsets from ZooKeeper", "group", g.name, "err", err)
		return
	}
	if fresh == nil {
		fresh = c.newGroup(g.name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.idleLocked() || g.offsetsSeq != seq {
		return
	}
	g.offsets, g.znodes = fresh.offsets, fresh.znodes
	if fresh.emptySince.After(g.emptySince) {
		g.emptySince = fresh.emptySince
	}
}

// offsetWrite is one partition of an OffsetCommit.
type offsetWrite struct {
	tp          topicPartition
	offset      int64
	leaderEpoch int32
	metadata    string
}

func (w *offsetWrite) withMeta() bool { return w.leaderEpoch >= 0 || w.metadata != "" }

// commitBatch is one queued OffsetCommit.
type commitBatch struct {
	ws   []offsetWrite
	done chan error
}

// writeOffsets queues ws for the group's committer and waits for the
// multi that carries it.
func (g *group) writeOffsets(ws []offsetWrite) error {
	b := g.co.b
	cb := &commitBatch{ws: ws, done: make(chan error, 1)}
	g.mu.Lock()
	g.commitQueue = append(g.commitQueue, cb)
	start := !g.committing
	g.committing = true
	g.mu.Unlock()
	if start && !b.goTracked("group-commit", g.commitLoop) {
		return ErrServerClosed
	}
	select {
	case err := <-cb.done:
		return err
	case <-b.done:
		return ErrServerClosed
	}
}

// commitLoop writes queued commits, all that are waiting in one multi,
// until the queue is empty.
func (g *group) commitLoop() {
	for {
		g.mu.Lock()
		q := g.commitQueue
		g.commitQueue = nil
		if len(q) == 0 {
			g.committing = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		var ws []offsetWrite
		if len(q) == 1 {
			ws = q[0].ws
		} else {
			at := map[topicPartition]int{}
			for _, cb := range q {
				for _, w := range cb.ws {
					if i, ok := at[w.tp]; ok {
						ws[i] = w
						continue
					}
					at[w.tp] = len(ws)
					ws = append(ws, w)
				}
			}
		}
		err := g.writeOffsetsNow(ws)
		for _, cb := range q {
			cb.done <- err
		}
	}
}

// writeOffsetsNow stores ws in one multi and then in memory. A multi that
// fails because the group's znodes changed under us (another tool, a
// concurrent commit creating the same parent) is retried after re-reading
// which znodes exist.
func (g *group) writeOffsetsNow(ws []offsetWrite) error {
	now := time.Now()
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		g.mu.Lock()
		if g.state == groupDead {
			g.mu.Unlock()
			return errGroupDead
		}
		ops, offIdx, optimistic := g.offsetOpsLocked(ws, now)
		g.mu.Unlock()
		var res []zk.MultiResponse
		res, err = g.co.b.zk.Conn.Multi(ops...)
		if err == nil {
			for _, r := range res {
				if r.Error != nil {
					err = r.Error
					break
				}
			}
		}
		if err == nil {
			g.mu.Lock()
			g.applyOffsetsLocked(ws, res, offIdx, now)
			g.mu.Unlock()
			g.commitRecords(ws, now)
			return nil
		}
		if !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		g.mu.Lock()
		for _, p := range optimistic {
			delete(g.znodes, p)
		}
		g.mu.Unlock()
		g.refreshZNodes(ws)
	}
	return err
}

var errGroupDead = errors.New("group is dead")

// offsetOpsLocked builds the commit multi. Paths it will create are
// marked existing at once (so a concurrent commit does not create them
// too) and returned, to be unmarked if the multi fails.
func (g *group) offsetOpsLocked(ws []offsetWrite, now time.Time) (ops []any, offIdx []int, optimistic []string) {
	z := g.co.b.zk
	ensure := func(p string) {
		if !g.znodes[p] {
			g.znodes[p] = true
			optimistic = append(optimistic, p)
			ops = append(ops, &zk.CreateRequest{Path: z.Path(p), Acl: z.ACL(p)})
		}
	}
	put := func(p string, data []byte) {
		if g.znodes[p] {
			ops = append(ops, &zk.SetDataRequest{Path: z.Path(p), Data: data, Version: -1})
			return
		}
		g.znodes[p] = true
		optimistic = append(optimistic, p)
		ops = append(ops, &zk.CreateRequest{Path: z.Path(p), Data: data, Acl: z.ACL(p)})
	}
	ensure(groupPath(g.name))
	ensure(groupPath(g.name) + "/offsets")
	for i := range ws {
		w := &ws[i]
		ensure(offsetsTopicPath(g.name, w.tp.topic))
		offIdx = append(offIdx, len(ops))
		put(offsetPath(g.name, w.tp), strconv.AppendInt(nil, w.offset, 10))
	}
	for i := range ws {
		w := &ws[i]
		mp := offsetMetaPath(g.name, w.tp)
		if w.withMeta() {
			ensure(groupPath(g.name) + "/offset-metadata")
			ensure(offsetMetaTopicPath(g.name, w.tp.topic))
			put(mp, zkmeta.MustJSON(offsetMetaZNode{LeaderEpoch: w.leaderEpoch, Metadata: w.metadata, CommitTimestamp: now.UnixMilli()}))
		} else if g.znodes[mp] {
			delete(g.znodes, mp)
			ops = append(ops, &zk.DeleteRequest{Path: z.Path(mp), Version: -1})
		}
	}
	return ops, offIdx, optimistic
}

// applyOffsetsLocked records a successful commit in memory. offIdx[i]
// is the index of ws[i]'s offset op: a set reports the znode's new mzxid,
// a create (the first write, which no other write can precede) 0.
func (g *group) applyOffsetsLocked(ws []offsetWrite, res []zk.MultiResponse, offIdx []int, now time.Time) {
	for i := range ws {
		w := &ws[i]
		var mz int64
		if j := offIdx[i]; j < len(res) && res[j].Stat != nil {
			mz = res[j].Stat.Mzxid
		}
		if cur := g.offsets[w.tp]; cur != nil && cur.mzxid > mz {
			continue // a concurrent, later commit already applied
		}
		g.offsets[w.tp] = &committedOffset{offset: w.offset, leaderEpoch: w.leaderEpoch, metadata: w.metadata,
			commitTime: now, hasMeta: w.withMeta(), mzxid: mz}
	}
	g.offsetsSeq++
}

// refreshZNodes re-reads which of the commit's znodes exist.
func (g *group) refreshZNodes(ws []offsetWrite) {
	z := g.co.b.zk
	paths := []string{groupPath(g.name), groupPath(g.name) + "/offsets", groupPath(g.name) + "/offset-metadata"}
	for _, w := range ws {
		paths = append(paths, offsetsTopicPath(g.name, w.tp.topic), offsetPath(g.name, w.tp),
			offsetMetaTopicPath(g.name, w.tp.topic), offsetMetaPath(g.name, w.tp))
	}
	exists := make(map[string]bool, len(paths))
	for _, p := range paths {
		ok, err := z.Exists(p)
		if err != nil {
			return
		}
		exists[p] = ok
	}
	g.mu.Lock()
	for p, ok := range exists {
		if ok {
			g.znodes[p] = true
		} else {
			delete(g.znodes, p)
		}
	}
	g.mu.Unlock()
}

// deleteOffsets removes partitions' offsets from ZooKeeper and memory.
func (g *group) deleteOffsets(tps []topicPartition) error {
	z := g.co.b.zk
	g.mu.Lock()
	var ops []any
	for _, tp := range tps {
		for _, p := range []string{offsetMetaPath(g.name, tp), offsetPath(g.name, tp)} {
			if g.znodes[p] {
				ops = append(ops, &zk.DeleteRequest{Path: z.Path(p), Version: -1})
			}
		}
	}
	g.mu.Unlock()
	if len(ops) > 0 {
		res, err := z.Conn.Multi(ops...)
		if err == nil {
			for _, r := range res {
				if r.Error != nil && !errors.Is(r.Error, zk.ErrNoNode) {
					err = r.Error
				}
			}
		}
		if err != nil {
			// Fall back to one by one (a node deleted by someone else).
			for _, op := range ops {
				d := op.(*zk.DeleteRequest)
				if err := z.Conn.Delete(d.Path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
					return err
				}
			}
		}
	}
	g.mu.Lock()
	g.offsetsSeq++
	for _, tp := range tps {
		delete(g.offsets, tp)
		delete(g.znodes, offsetPath(g.name, tp))
		delete(g.znodes, offsetMetaPath(g.name, tp))
	}
	g.mu.Unlock()
	g.offsetTombstones(tps)
	return nil
}

// deleteGroupZNodes removes /consumers/{group} and everything under it.
func (c *coordinator) deleteGroupZNodes(name string) error {
	return c.b.zk.DeleteRecursive(groupPath(name))
}
