package broker

import (
	"errors"
	"os"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// StopReplica (key 5), v4 only, via kmsg: the controller tells a broker to
// stop hosting replicas, and with delete to drop their data (topic
// deletion). Epochs as in LeaderAndIsr (control_epochs.go). Per
// partition, a leader epoch (>= 0) below the one this broker knows is
// FENCED_LEADER_EPOCH, as Kafka; -2 (the epoch during a deletion) and -1
// are always accepted. Without delete the broker re-reads the topic (it
// has no replica fetcher to stop).

func init() { regKey(int16(kmsg.StopReplica), 4, 4, kmsgHandler(handleStopReplica)) }

func handleStopReplica(c *conn, req *kmsg.StopReplicaRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
	if c.clusterActionDenied() {
		return deniedStopReplica(req, resp), nil
	}
	b := c.b
	if code := b.epochs.check(req.ControllerEpoch, req.BrokerEpoch); code != 0 {
		resp.ErrorCode = code
		return resp, nil
	}
	for _, rt := range req.Topics {
		reloaded := false
		for _, ps := range rt.PartitionStates {
			rp := kmsg.NewStopReplicaResponsePartition()
			rp.Topic, rp.Partition = rt.Topic, ps.Partition
			t := b.cluster.topic(rt.Topic)
			switch {
			case t != nil && ps.LeaderEpoch >= 0 && int(ps.Partition) < len(t.leaderEpochs) && ps.Partition >= 0 &&
				ps.LeaderEpoch < t.leaderEpochs[ps.Partition]:
				rp.ErrorCode = kerr.FencedLeaderEpoch.Code
			case ps.Delete:
				if err := b.deleteReplica(rt.Topic, ps.Partition); err != nil {
					b.log.Warn("StopReplica: deleting replica", "topic", rt.Topic, "partition", ps.Partition, "err", err)
					rp.ErrorCode = kerr.KafkaStorageError.Code
				}
			case !reloaded:
				reloaded = true
				if err := b.reloadTopic(rt.Topic); err != nil {
					b.log.Warn("StopReplica: re-reading topic", "topic", rt.Topic, "err", err)
				}
			}
			resp.Partitions = append(resp.Partitions, rp)
		}
	}
	return resp, nil
}

// deleteReplica drops this broker's data of partition p of topic name.
// When the topic is gone from ZooKeeper (a deletion) the whole topic is
// dropped, as the /brokers/topics watch would; otherwise only the
// partition: closed if open, its directory removed.
func (b *Broker) deleteReplica(name string, p int32) error {
	if ok, err := b.zk.Exists(zkmeta.TopicPath(name)); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	} else if !ok {
		b.dropTopic(name)
		return nil
	}
	b.cluster.applyMu.Lock()
	defer b.cluster.applyMu.Unlock()
	if t := b.cluster.topic(name); t != nil {
		if part := t.replica(p); part != nil { // led or followed
			nt := *t
			nt.parts, nt.local = slices.Clone(t.parts), slices.Clone(t.local)
			if int(p) < len(nt.parts) {
				nt.parts[p] = nil
			}
			nt.local[p] = nil
			b.cluster.mu.Lock()
			b.cluster.topics[name], b.cluster.byID[t.id] = &nt, &nt
			b.cluster.mu.Unlock()
			b.unfollow(part)
			part.close()
			b.cleaner.forget(part)
		}
	}
	var errs []error
	for _, d := range b.cfg.LogDirs {
		errs = append(errs, os.RemoveAll(partitionDir(d, name, p)))
	}
	return errors.Join(errs...)
}
