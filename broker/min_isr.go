package broker

import "strconv"

// minInsyncReplicas is partition p's min.insync.replicas (topic config,
// else the broker default, dynamic or static). Kafka's Partition.appendRecordsToLeader
// refuses an acks=all produce with NOT_ENOUGH_REPLICAS, before appending,
// when the ISR is smaller.
func (b *Broker) minInsyncReplicas(t *topic) int {
	v, ok := t.overrides["min.insync.replicas"]
	if !ok {
		v = findTopicConfigDef("min.insync.replicas").dflt(b.topicDefaults())
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1 // validated when set; never below Kafka's minimum
	}
	return n
}
