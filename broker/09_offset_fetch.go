package broker

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// OffsetFetch (key 9), v0-8, via kmsg.
//
// Offsets come from the coordinator's memory, which is loaded from
// ZooKeeper (/consumers/{group}/offsets, /offset-metadata) when the
// group is first touched, and re-read from it when nobody uses the group
// through this broker (refreshIdle), so commits made straight into
// ZooKeeper are seen. A partition without a commit answers offset
// -1 and no error. v2+ fetch every committed partition when topics is
// null, and carry a top-level error; v5 adds the leader epoch; v8 asks
// for several groups at once. v0-1 put group-level errors in every
// partition. With require_stable (v7+) a partition whose offset is
// pending in an open transaction (TxnOffsetCommit, txn_offsets.go)
// answers UNSTABLE_OFFSET_COMMIT, as Kafka (KIP-447).

func init() { regKey(kproto.KeyOffsetFetch, 0, 8, groupHandler(handleOffsetFetch)) }

type fetchTopic struct {
	name       string
	partitions []int32
}

type fetchedPartition struct {
	partition   int32
	offset      int64
	leaderEpoch int32
	metadata    *string
	errorCode   int16 // TOPIC_AUTHORIZATION_FAILED: a topic the principal may not DESCRIBE
}

type fetchedTopic struct {
	name       string
	partitions []fetchedPartition
}

func handleOffsetFetch(r groupRequest, req *kmsg.OffsetFetchRequest) kmsg.Response {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			var topics []fetchTopic
			if rg.Topics != nil {
				topics = []fetchTopic{}
				for _, t := range rg.Topics {
					topics = append(topics, fetchTopic{t.Topic, t.Partitions})
				}
			}
			unstable := r.c.b.unstableBefore(rg.Group, req.RequireStable)
			code, out := r.c.fetchOffsetsAuthorized(rg.Group, topics)
			unstable.mark(out)
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group, g.ErrorCode = rg.Group, code
			for _, t := range out {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.name
				for _, p := range t.partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p.partition, p.offset, p.leaderEpoch, p.metadata
					rp.ErrorCode = p.errorCode
					rt.Partitions = append(rt.Partitions, rp)
				}
				g.Topics = append(g.Topics, rt)
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}
	var topics []fetchTopic
	if req.Topics != nil || req.Version < 2 {
		topics = []fetchTopic{}
		for _, t := range req.Topics {
			topics = append(topics, fetchTopic{t.Topic, t.Partitions})
		}
	}
	unstable := r.c.b.unstableBefore(req.Group, req.RequireStable)
	code, out := r.c.fetchOffsetsAuthorized(req.Group, topics)
	unstable.mark(out)
	if code != 0 && req.Version < 2 {
		// No top-level error field: every partition carries it.
		out = nil
		for _, t := range topics {
			ft := fetchedTopic{name: t.name}
			for _, p := range t.partitions {
				ft.partitions = append(ft.partitions, fetchedPartition{partition: p, offset: -1, leaderEpoch: -1})
			}
			out = append(out, ft)
		}
	}
	resp.ErrorCode = code
	for _, t := range out {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.name
		for _, p := range t.partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p.partition, p.offset, p.leaderEpoch, p.metadata
			rp.ErrorCode = p.errorCode
			if req.Version < 2 && code != 0 {
				rp.ErrorCode = code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// fetchOffsets answers one group's fetch; topics nil means every
// committed partition.
func (c *coordinator) fetchOffsets(name string, topics []fetchTopic) (int16, []fetchedTopic) {
	if name == "" {
		return ec(kproto.CodeInvalidGroupID), nil
	}
	g, code := c.lookup(name, false)
	if code != 0 {
		return code, nil
	}
	if g != nil {
		c.refreshIdle(g)
	}
	empty := ""
	get := func(tp topicPartition) fetchedPartition {
		fp := fetchedPartition{partition: tp.partition, offset: -1, leaderEpoch: -1, metadata: &empty}
		if g == nil {
			return fp
		}
		if o := g.offsets[tp]; o != nil {
			m := o.metadata
			fp.offset, fp.leaderEpoch, fp.metadata = o.offset, o.leaderEpoch, &m
		}
		return fp
	}
	if g != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
	}
	var out []fetchedTopic
	if topics == nil {
		if g == nil {
			return 0, nil
		}
		byTopic := map[string][]int32{}
		for tp := range g.offsets {
			byTopic[tp.topic] = append(byTopic[tp.topic], tp.partition)
		}
		names := make([]string, 0, len(byTopic))
		for t := range byTopic {
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			ps := byTopic[t]
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			topics = append(topics, fetchTopic{t, ps})
		}
	}
	for _, t := range topics {
		ft := fetchedTopic{name: t.name}
		for _, p := range t.partitions {
			ft.partitions = append(ft.partitions, get(topicPartition{t.name, p}))
		}
		out = append(out, ft)
	}
	return 0, out
}
