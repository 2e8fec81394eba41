package broker

// retentionLoop enforces retention.ms and retention.bytes on every local
// partition each log.retention.check.interval.ms, as Kafka's log manager.
// The segment log deletes whole segments only, so a partition keeps at
// least its active segment's data until it rolls (segment.bytes,
// segment.ms), exactly as in Kafka.
func (b *Broker) retentionLoop() {
	for b.sleep(b.cfg.LogRetentionCheck) {
		b.enforceRetention()
	}
}

func (b *Broker) enforceRetention() {
	for _, t := range b.cluster.allTopics() {
		for _, p := range t.local {
			if p == nil {
				continue
			}
			n, err := p.log.EnforceRetention()
			if err != nil {
				b.log.Warn("enforcing retention", "topic", p.topic, "partition", p.index, "err", err)
			} else if n > 0 {
				b.log.Info("retention deleted segments", "topic", p.topic, "partition", p.index,
					"segments", n, "log_start_offset", p.log.StartOffset())
			}
		}
	}
}
