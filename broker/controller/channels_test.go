package controller

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// recordingChannels is the Channels of the scripts: it prints the queues
// it is given and every request queued, in a short form.
type recordingChannels struct {
	out    *strings.Builder
	queues map[int32]int64
}

func (r *recordingChannels) SetBrokers(brokers map[int32]BrokerInfo) {
	now := map[int32]int64{}
	for id, b := range brokers {
		now[id] = b.Epoch
	}
	var gone, added []string
	for _, id := range slices.Sorted(maps.Keys(r.queues)) {
		if e, ok := now[id]; !ok || e != r.queues[id] {
			gone = append(gone, fmt.Sprint(id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(now)) {
		if e, ok := r.queues[id]; !ok || e != now[id] {
			added = append(added, fmt.Sprint(id))
		}
	}
	if len(gone) > 0 {
		fmt.Fprintf(r.out, "queues dropped: %s\n", strings.Join(gone, " "))
	}
	if len(added) > 0 {
		fmt.Fprintf(r.out, "queues added: %s\n", strings.Join(added, " "))
	}
	r.queues = now
}

func (r *recordingChannels) Enqueue(to int32, req kmsg.Request) {
	switch req := req.(type) {
	case *kmsg.LeaderAndISRRequest:
		fmt.Fprintf(r.out, "send LeaderAndIsr v%d to %d (controller %d epoch %d, broker epoch %d):\n", req.Version, to, req.ControllerID, req.ControllerEpoch, req.BrokerEpoch)
		for _, ts := range req.TopicStates {
			for _, ps := range ts.PartitionStates {
				isNew := ""
				if ps.IsNew {
					isNew = " new"
				}
				fmt.Fprintf(r.out, "  %s-%d leader=%d epoch=%d isr=%v replicas=%v zk_version=%d%s\n", ts.Topic, ps.Partition, ps.Leader, ps.LeaderEpoch, ps.ISR, ps.Replicas, ps.ZKVersion, isNew)
			}
		}
		var leaders []string
		for _, l := range req.LiveLeaders {
			leaders = append(leaders, fmt.Sprintf("%d@%s:%d", l.BrokerID, l.Host, l.Port))
		}
		fmt.Fprintf(r.out, "  live leaders [%s]\n", strings.Join(leaders, " "))
	case *kmsg.UpdateMetadataRequest:
		var brokers []string
		for _, b := range req.LiveBrokers {
			brokers = append(brokers, fmt.Sprint(b.ID))
		}
		var parts []string
		for _, ts := range req.TopicStates {
			for _, ps := range ts.PartitionStates {
				p := fmt.Sprintf("%s-%d", ts.Topic, ps.Partition)
				if ps.Leader != leaderDuringDelete {
					p += fmt.Sprintf(" leader=%d epoch=%d isr=%v", ps.Leader, ps.LeaderEpoch, ps.ISR)
					if len(ps.OfflineReplicas) > 0 {
						p += fmt.Sprintf(" offline=%v", ps.OfflineReplicas)
					}
				} else {
					p += " deleted"
				}
				parts = append(parts, p)
			}
		}
		fmt.Fprintf(r.out, "send UpdateMetadata v%d to %d (broker epoch %d): brokers [%s]\n", req.Version, to, req.BrokerEpoch, strings.Join(brokers, " "))
		for _, p := range parts {
			fmt.Fprintf(r.out, "  %s\n", p)
		}
	case *kmsg.StopReplicaRequest:
		var parts []string
		for _, t := range req.Topics {
			for _, ps := range t.PartitionStates {
				parts = append(parts, fmt.Sprintf("%s-%d epoch=%d delete=%v", t.Topic, ps.Partition, ps.LeaderEpoch, ps.Delete))
			}
		}
		fmt.Fprintf(r.out, "send StopReplica v%d to %d (broker epoch %d): %s\n", req.Version, to, req.BrokerEpoch, strings.Join(parts, ", "))
	}
}
