package broker

import (
	"context"

	"github.com/zkafka/zkafka/store/segment"
)

// LogFileSystem is the file system of the partition logs (Config.LogFS).
type LogFileSystem = segment.FS

// Kill stops the broker as far as its files go as kill -9 would: no
// controlled shutdown, no request finished (the connections close at
// once), and none of what a clean stop writes on its way out: no
// high-watermark checkpoint, no producer-state snapshot, no trimming or
// syncing of the logs, whose files are closed as they are. What the logs
// had written and not synced is left to the file system: the operating
// system's keeps it (as a killed process's writes stay in the page cache);
// a Config.LogFS that loses unsynced writes on a crash (internal/faultfs's
// Crash, called before Kill) makes it lost, as a machine crash would.
// The next start recovers the logs as after a crash. Kill does not keep
// the broker from reaching ZooKeeper or other brokers while it stops (its
// /controller deletion, its session's close): a harness cuts its network
// first, as zkafkatest's Kill does.
func (b *Broker) Kill() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return b.shutdown(ctx, false)
}

// abandonPartitions closes every partition's files with no clean-close
// step (Kill): segment.Log.Abandon, no producer-state snapshot.
func (b *Broker) abandonPartitions() {
	b.cluster.applyMu.Lock()
	defer b.cluster.applyMu.Unlock()
	for _, t := range b.cluster.allTopics() {
		for _, part := range t.local {
			if part != nil {
				part.abandon()
			}
		}
	}
}

// abandon is close without the producer-state snapshot or the log's
// flush.
func (p *partition) abandon() {
	p.mu.Lock()
	p.mu.role, p.mu.leader = roleNone, nil
	p.wakeLocked()
	p.mu.Unlock()
	p.log.Abandon()
}
