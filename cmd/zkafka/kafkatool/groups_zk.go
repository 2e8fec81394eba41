package kafkatool

import (
	"context"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// zkGroupOffsets reads a group's committed offsets from
// /consumers/G/offsets/T/P, where the ZooKeeper-coordinated consumer
// writes them. The broker re-reads them too for a group without members
// there (broker/group_store.go refreshIdle); reading them here keeps
// --zookeeper working against brokers that do not.
func zkGroupOffsets(ctx context.Context, cl *cluster, group string) kadm.OffsetResponses {
	out := kadm.OffsetResponses{}
	base := cl.zk.path("/consumers/" + group + "/offsets")
	topics, _, err := cl.zk.Children(base)
	if err != nil {
		return out
	}
	for _, t := range topics {
		ps, _, err := cl.zk.Children(base + "/" + t)
		if err != nil {
			continue
		}
		for _, p := range ps {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				continue
			}
			data, _, err := cl.zk.Get(base + "/" + t + "/" + p)
			if err != nil {
				continue
			}
			at, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
			if err != nil {
				continue
			}
			out.Add(kadm.OffsetResponse{Offset: kadm.Offset{Topic: t, Partition: int32(n), At: at, LeaderEpoch: -1}})
		}
	}
	return out
}

// withZKOffsets fills in the lag of a group that has no members at the
// broker from the offsets in ZooKeeper.
func withZKOffsets(ctx context.Context, cl *cluster, l *kadm.DescribedGroupLag) error {
	if cl.zk == nil || len(l.Members) > 0 {
		return nil
	}
	committed := zkGroupOffsets(ctx, cl, l.Group)
	if len(committed) == 0 {
		return nil
	}
	var topics []string
	for t := range committed {
		topics = append(topics, t)
	}
	starts, err := cl.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	ends, err := cl.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return err
	}
	l.Lag = kadm.CalculateGroupLagWithStartOffsets(kadm.DescribedGroup{Group: l.Group, State: l.State}, committed, starts, ends)
	return nil
}
