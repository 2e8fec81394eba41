package broker

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaderAndIsr (key 4), v7 only (inter-broker protocol 2.7 and later), via
// kmsg: the controller tells a broker the leadership of the partitions it
// hosts a replica of.
//
// The epochs are checked first (control_epochs.go: STALE_BROKER_EPOCH,
// STALE_CONTROLLER_EPOCH for the whole request). The controller writes
// the states to ZooKeeper before it sends them, so the broker applies
// each topic named by re-reading it (reloadTopic: it opens the
// partitions it now leads and closes those it no longer leads). Per
// partition: UNKNOWN_TOPIC_OR_PARTITION when the topic or partition is
// not in ZooKeeper, STALE_CONTROLLER_EPOCH when the broker already knows
// a newer leader epoch than the request's (Kafka's answer to a late
// request), KAFKA_STORAGE_ERROR when the partition could not be applied.
// is_new and the live leaders are not used: the partition state is read
// from ZooKeeper, and there are no replica fetchers here.

func init() { regKey(int16(kmsg.LeaderAndISR), 7, 7, kmsgHandler(handleLeaderAndISR)) }

func handleLeaderAndISR(c *conn, req *kmsg.LeaderAndISRRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
	if c.clusterActionDenied() {
		return deniedLeaderAndISR(req, resp), nil
	}
	b := c.b
	if code := b.epochs.check(req.ControllerEpoch, req.BrokerEpoch); code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	for _, ts := range req.TopicStates {
		rt := kmsg.NewLeaderAndISRResponseTopic()
		rt.TopicID = ts.TopicID
		err := b.reloadTopic(ts.Topic)
		if err != nil {
			b.log.Warn("LeaderAndIsr: applying topic", "topic", ts.Topic, "err", err)
		}
		t := b.cluster.topic(ts.Topic)
		for _, ps := range ts.PartitionStates {
			rp := kmsg.NewLeaderAndISRResponseTopicPartition()
			rp.Partition = ps.Partition
			switch {
			case t == nil || ps.Partition < 0 || int(ps.Partition) >= len(t.replicas):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case t.leaderEpochs[ps.Partition] > ps.LeaderEpoch:
				rp.ErrorCode = kerr.StaleControllerEpoch.Code
			case err != nil && t.leaders[ps.Partition] == b.cfg.BrokerID && t.partition(ps.Partition) == nil:
				rp.ErrorCode = kerr.KafkaStorageError.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
