package broker

import (
	"strconv"

	"github.com/zkafka/zkafka/kproto"
)

// Creating __transaction_state and finding a transactional id's
// coordinator (FindCoordinator key type 1), as offsets_topic.go does for
// groups. The topic is created on the first FindCoordinator or
// InitProducerId with a transactional id, with
// transaction.state.log.num.partitions partitions (50) and
// transaction.state.log.replication.factor replicas (3; capped at the
// live brokers with a warning, where Kafka answers
// COORDINATOR_NOT_AVAILABLE until enough brokers are up), compacted,
// min.insync.replicas transaction.state.log.min.isr (capped at the
// replication factor).

// txnCoordinatorFor is the broker FindCoordinator names for a
// transactional id: the leader of its partition in the metadata cache;
// COORDINATOR_NOT_AVAILABLE while the topic is created or the partition
// has no live leader.
func (b *Broker) txnCoordinatorFor(id string) (brokerInfo, kproto.ErrorCode) {
	_, parts, ok := b.meta.topic(transactionTopic)
	if !ok || len(parts) == 0 {
		b.ensureTransactionTopic()
		return brokerInfo{}, kproto.CodeCoordinatorNotAvailable
	}
	leader := parts[transactionPartitionOf(id, len(parts))].leader
	br, ok := b.meta.broker(leader)
	if leader < 0 || !ok || !b.meta.isLive(leader) {
		return brokerInfo{}, kproto.CodeCoordinatorNotAvailable
	}
	return br, kproto.CodeNone
}

// ensureTransactionTopic creates __transaction_state if it does not exist.
func (b *Broker) ensureTransactionTopic() {
	if b.cluster.topic(transactionTopic) != nil {
		return
	}
	cfg := b.txns.cfg
	n, rf, minISR := cfg.StateLogPartitions, cfg.StateLogReplicationFactor, cfg.StateLogMinISR
	if live := len(b.cluster.liveBrokers()); int(rf) > live && live > 0 {
		b.log.Warn("fewer live brokers than transaction.state.log.replication.factor; creating "+transactionTopic+" with fewer replicas",
			"transaction.state.log.replication.factor", rf, "live_brokers", live)
		rf = int16(live)
	}
	if minISR > int32(rf) {
		minISR = int32(rf)
	}
	configs := map[string]string{
		"cleanup.policy":                 "compact",
		"compression.type":               "producer", // Kafka: uncompressed; the coordinator writes uncompressed batches either way
		"min.insync.replicas":            strconv.Itoa(int(minISR)),
		"segment.bytes":                  strconv.Itoa(int(cfg.StateLogSegmentBytes)),
		"unclean.leader.election.enable": "false",
	}
	_, err := b.createTopic(topicSpec{name: transactionTopic, partitions: n, rf: rf, configs: configs}, false)
	if err != nil {
		if code, _ := codeOf(err); code != kproto.CodeTopicAlreadyExists {
			b.log.Warn("creating "+transactionTopic, "err", err)
		}
	}
}
