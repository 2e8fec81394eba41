package broker

import (
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/kproto"
)

// Offset expiry, as Kafka 2.1+ (KIP-211): every
// offsets.retention.check.interval.ms the coordinator looks at the groups
// it coordinates (every child of /consumers that hashes to it). A group
// that has been Empty for offsets.retention.minutes loses its offsets; a
// group without a protocol type (commits only, no members ever) loses
// each offset retention after its commit. Offsets of topics that no
// longer exist go too, at once when the topic is deleted (topicDeleted)
// and on each check. An Empty group left without offsets is deleted from
// ZooKeeper.

func (c *coordinator) expiryLoop() {
	for c.b.sleep(c.cfg.OffsetsRetentionCheck) {
		c.expireOffsets(time.Now())
	}
}

// expireOffsets runs one expiry pass.
func (c *coordinator) expireOffsets(now time.Time) {
	names, err := c.b.zk.Children("/consumers")
	if err != nil {
		if !errors.Is(err, zk.ErrConnectionClosed) {
			c.b.log.Warn("offset expiry: listing groups", "err", err)
		}
		return
	}
	for _, name := range names {
		if !c.b.coordinates(name) {
			continue
		}
		g, code := c.lookup(name, false)
		if code != 0 || g == nil {
			continue
		}
		c.expireGroup(g, now)
	}
}

func (c *coordinator) expireGroup(g *group, now time.Time) {
	retention := c.cfg.OffsetsRetention
	c.refreshIdle(g) // commits made in ZooKeeper keep offsets alive
	g.mu.Lock()
	if g.state == groupDead {
		g.mu.Unlock()
		return
	}
	var expired []topicPartition
	emptyLong := g.state == groupEmpty && now.Sub(g.emptySince) >= retention
	for tp, o := range g.offsets {
		switch {
		case c.b.cluster.topic(tp.topic) == nil:
		case g.state == groupEmpty && g.protocolType == "" && now.Sub(o.commitTime) >= retention:
		case emptyLong && g.protocolType != "":
		default:
			continue
		}
		expired = append(expired, tp)
	}
	g.mu.Unlock()
	if len(expired) > 0 {
		if err := g.deleteOffsets(expired); err != nil {
			c.b.log.Warn("offset expiry", "group", g.name, "err", err)
			return
		}
		c.b.log.Info("expired committed offsets", "group", g.name, "partitions", len(expired))
	}
	g.mu.Lock()
	dead := g.state == groupEmpty && len(g.offsets) == 0 && len(g.pending) == 0
	var out outbox
	if dead {
		out = g.dieLocked(ec(kproto.CodeGroupIDNotFound))
	}
	g.mu.Unlock()
	g.finish(out)
	if dead {
		c.remove(g)
		if err := c.deleteGroupZNodes(g.name); err != nil {
			c.b.log.Warn("deleting expired group", "group", g.name, "err", err)
		} else {
			g.groupTombstones()
		}
	}
}

// topicDeleted drops the offsets of a deleted topic from every group
// this broker coordinates, in the background (it is called with
// cluster.applyMu held).
func (c *coordinator) topicDeleted(topic string) {
	c.b.goTracked("group-topic-deleted", func() {
		names, err := c.b.zk.Children("/consumers")
		if err != nil {
			return
		}
		for _, name := range names {
			if !c.b.coordinates(name) {
				continue
			}
			g, code := c.lookup(name, false)
			if code != 0 || g == nil {
				continue
			}
			g.mu.Lock()
			var tps []topicPartition
			for tp := range g.offsets {
				if tp.topic == topic {
					tps = append(tps, tp)
				}
			}
			g.mu.Unlock()
			if len(tps) == 0 {
				continue
			}
			if err := g.deleteOffsets(tps); err != nil {
				c.b.log.Warn("dropping offsets of deleted topic", "group", name, "topic", topic, "err", err)
				continue
			}
			for _, p := range []string{offsetsTopicPath(name, topic), offsetMetaTopicPath(name, topic)} {
				if err := c.b.zk.DeleteRecursive(p); err != nil {
					c.b.log.Warn("dropping offsets of deleted topic", "path", p, "err", err)
				}
			}
			g.mu.Lock()
			delete(g.znodes, offsetsTopicPath(name, topic))
			delete(g.znodes, offsetMetaTopicPath(name, topic))
			g.mu.Unlock()
		}
	})
}
