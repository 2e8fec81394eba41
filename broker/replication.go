package broker

import (
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/zkafka/zkafka/broker/replica"
)

// The broker's replica manager glue (Kafka's ReplicaManager): the
// follower fetchers (broker/replica), the ISR shrink timer, the
// AlterPartition sender (alter_partition.go) and the high watermark
// checkpoint.

// replication is the broker's replication state beside the partitions.
type replication struct {
	fetchers *replica.Fetchers

	// isr holds the partitions with an ISR change to send; wake tells
	// the sender.
	isr struct {
		sync.Mutex
		pending map[*partition]bool
	}
	isrWake chan struct{}

	// hws are the high watermarks read at start from each log dir's
	// replication-offset-checkpoint (by dir; loaded on first use, under
	// cluster.applyMu).
	hws map[string]map[replica.TopicPartition]int64

	// throttle is the replication quotas (throttle.go).
	throttle throttles
}

func (b *Broker) initReplication() {
	rc := &b.cfg.Replication
	b.initThrottles()
	b.repl.fetchers = replica.NewFetchers(replica.FetcherConfig{Self: b.cfg.BrokerID, WaitMax: rc.FetchWaitMax,
		Backoff: rc.FetchBackoff, MaxBytes: rc.FetchMaxBytes, ResponseMaxBytes: rc.FetchResponseMaxBytes,
		Addr: b.interBrokerAddr, ClientOpts: b.interBrokerClientOpts(), Go: b.goTracked, Log: b.log,
		Throttle: b.repl.throttle.follower, Throttled: b.followerThrottled})
	b.repl.isr.pending = map[*partition]bool{}
	b.repl.isrWake = make(chan struct{}, 1)
	b.repl.hws = map[string]map[replica.TopicPartition]int64{}
}

// startReplication starts the timers and the ISR sender (startCluster).
func (b *Broker) startReplication() {
	b.goTracked("isr-shrink", b.isrShrinkLoop)
	b.goTracked("isr-sender", b.isrSendLoop)
	b.goTracked("hw-checkpoint", b.hwCheckpointLoop)
}

// interBrokerAddr is where broker id's inter-broker listener is.
func (b *Broker) interBrokerAddr(id int32) (string, bool) {
	b.cluster.mu.RLock()
	br, ok := b.cluster.brokers[id]
	b.cluster.mu.RUnlock()
	if !ok {
		return "", false
	}
	host, port := br.at(b.cfg.interBrokerListener())
	return net.JoinHostPort(host, strconv.Itoa(int(port))), true
}

// followOrNot has the fetchers fetch part from its leader when it follows
// one, and stop otherwise.
func (b *Broker) followOrNot(part *partition) {
	if leader, ok := part.following(); ok {
		b.repl.fetchers.Follow(leader, replica.TopicPartition{Topic: part.topic, Partition: part.index}, asFollower{part})
		return
	}
	b.unfollow(part)
}

func (b *Broker) unfollow(part *partition) {
	b.repl.fetchers.Unfollow(replica.TopicPartition{Topic: part.topic, Partition: part.index})
}

// localPartitions is every open replica.
func (b *Broker) localPartitions() []*partition {
	var out []*partition
	for _, t := range b.cluster.allTopics() {
		for _, p := range t.local {
			if p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// isrShrinkLoop runs the ISR shrink check every replica.lag.time.max.ms/2,
// as Kafka's isr-expiration task.
func (b *Broker) isrShrinkLoop() {
	lag := b.cfg.Replication.LagTimeMax
	for b.sleep(max(lag/2, 10*time.Millisecond)) {
		now := time.Now()
		for _, p := range b.localPartitions() {
			p.maybeShrinkISR(now, lag)
		}
	}
}

// checkpointedHW is the high watermark of topic-p in dir's checkpoint
// (0 when none). cluster.applyMu must be held.
func (b *Broker) checkpointedHW(partDir, topic string, p int32) int64 {
	dir := filepath.Dir(partDir)
	m, ok := b.repl.hws[dir]
	if !ok {
		var err error
		if m, err = replica.ReadHighWatermarks(dir); err != nil {
			b.log.Warn("reading the high watermark checkpoint; starting from 0", "dir", dir, "err", err)
			m = map[replica.TopicPartition]int64{}
		}
		b.repl.hws[dir] = m
	}
	return m[replica.TopicPartition{Topic: topic, Partition: p}]
}

func (b *Broker) hwCheckpointLoop() {
	for b.sleep(b.cfg.Replication.HighWatermarkCheckpointInterval) {
		b.checkpointHighWatermarks()
	}
}

// checkpointHighWatermarks writes every log dir's
// replication-offset-checkpoint (the interval's timer and Shutdown).
func (b *Broker) checkpointHighWatermarks() {
	byDir := map[string]map[replica.TopicPartition]int64{}
	for _, d := range b.cfg.LogDirs {
		byDir[filepath.Clean(d)] = map[replica.TopicPartition]int64{}
	}
	for _, p := range b.localPartitions() {
		d := filepath.Dir(p.dir)
		if byDir[d] == nil {
			byDir[d] = map[replica.TopicPartition]int64{}
		}
		byDir[d][replica.TopicPartition{Topic: p.topic, Partition: p.index}] = p.highWatermark()
	}
	for d, m := range byDir {
		if err := replica.WriteHighWatermarks(d, m); err != nil {
			b.log.Warn("writing the high watermark checkpoint", "dir", d, "err", err)
		}
	}
}
