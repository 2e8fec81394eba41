package broker

import (
	"strconv"
	"time"

	"github.com/zkafka/zkafka/broker/replica"
)

// Replication throttles (KIP-73), as Kafka's ReplicationQuotaManager:
//
//   - the rates are this broker's dynamic configs
//     leader.replication.throttled.rate and
//     follower.replication.throttled.rate (bytes/s, /config/brokers/{id};
//     as Kafka's BrokerConfigHandler, the <default> entity's values are
//     not applied), unlimited when unset;
//   - the partitions are each topic's leader.replication.throttled.replicas
//     and follower.replication.throttled.replicas ("*" or
//     partition:broker entries; an entry names the broker that throttles,
//     topicconfig.go);
//   - leader side: a follower fetch of a throttled partition by a follower
//     that is not in the ISR gets no records while the leader's rate is
//     over its bound; every throttled partition's bytes sent to followers
//     count (01_fetch.go's writeFetch);
//   - follower side: broker/replica's fetchers leave a throttled partition
//     that has not caught up out of their fetches while the follower rate
//     is over its bound, and count every throttled partition's bytes
//     fetched;
//   - the rates are measured over replication.quota.window.num samples of
//     replication.quota.window.size.seconds (replica.Rate).

// throttles are the broker's two replication quotas.
type throttles struct {
	leader, follower *replica.Quota
}

func (b *Broker) initThrottles() {
	rc := &b.cfg.Replication
	b.repl.throttle.leader = replica.NewQuota(int(rc.QuotaWindows), rc.QuotaWindowSize)
	b.repl.throttle.follower = replica.NewQuota(int(rc.QuotaWindows), rc.QuotaWindowSize)
}

// applyThrottleRates sets the quotas' bounds from this broker's dynamic
// configs.
func (b *Broker) applyThrottleRates(d *dynamicConfigs) {
	b.repl.throttle.leader.SetBound(throttleRate(d.broker, "leader.replication.throttled.rate"))
	b.repl.throttle.follower.SetBound(throttleRate(d.broker, "follower.replication.throttled.rate"))
}

func throttleRate(m map[string]string, key string) int64 {
	if n, err := strconv.ParseInt(m[key], 10, 64); err == nil && n >= 0 {
		return n
	}
	return replica.Unlimited
}

// leaderThrottle marks fp when its partition is leader-throttled here and
// reports whether this follower fetch gets no records now (Kafka's
// ReplicaManager.shouldLeaderThrottle: not in the ISR, and the rate over
// the bound).
func (c *conn) leaderThrottle(part *partition, follower int32, fp *fetchPart) bool {
	if !part.cfg.Load().leaderThrottled.Has(part.index) {
		return false
	}
	fp.throttled = true
	return !part.inISR(follower) && c.b.repl.throttle.leader.Exceeded(time.Now())
}

// followerThrottled reports whether this broker throttles its follower
// replica of tp (the fetchers' FetcherConfig.Throttled).
func (b *Broker) followerThrottled(tp replica.TopicPartition) bool {
	part := b.cluster.topic(tp.Topic).replica(tp.Partition)
	return part != nil && part.cfg.Load().followerThrottled.Has(tp.Partition)
}

// inISR reports whether id is in the committed ISR.
func (p *partition) inISR(id int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.mu.isr {
		if r == id {
			return true
		}
	}
	return false
}
