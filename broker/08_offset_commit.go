package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// OffsetCommit (key 8), v0-8, via kmsg.
//
// One ZooKeeper multi per request (group_store.go) writes
// /consumers/{group}/offsets/{topic}/{partition} and, when the commit
// carries a leader epoch (v6+) or metadata,
// /consumers/{group}/offset-metadata/{topic}/{partition}. Group checks in
// Kafka's order: generation -1 with no member id commits into an Empty
// (or new) group, as admin tools and assign()-mode consumers do; a
// rebalance waiting for SyncGroup gives REBALANCE_IN_PROGRESS; then
// unknown member, wrong generation. Commits during PreparingRebalance
// from the current generation are accepted (eager consumers commit
// before they rejoin). Per partition: unknown topic or partition
// UNKNOWN_TOPIC_OR_PARTITION, metadata over offset.metadata.max.bytes
// OFFSET_METADATA_TOO_LARGE. A failed ZooKeeper write answers
// COORDINATOR_NOT_AVAILABLE (retriable) and leaves memory unchanged.
// v1's per-partition timestamp and v2-4's retention time are ignored:
// retention is offsets.retention.minutes, as in Kafka 2.1+.
// v9 (KIP-848 member epochs) is not served.

func init() { regKey(kproto.KeyOffsetCommit, 0, 8, groupHandler(handleOffsetCommit)) }

func handleOffsetCommit(r groupRequest, req *kmsg.OffsetCommitRequest) kmsg.Response {
	b := r.c.b
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	codes := make([][]int16, len(req.Topics))
	for i, t := range req.Topics {
		codes[i] = make([]int16, len(t.Partitions))
	}
	setAll := func(code int16) {
		for i := range codes {
			for j := range codes[i] {
				codes[i][j] = code
			}
		}
	}
	defer func() {
		for i, t := range req.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for j, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, r.c.offsetCommitCode(t.Topic, codes[i][j])
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}()
	if !r.c.allowedGroup(authz.OpRead, req.Group) {
		setAll(ec(kproto.CodeGroupAuthorizationFailed))
		return resp
	}
	if req.Group == "" {
		setAll(ec(kproto.CodeInvalidGroupID))
		return resp
	}
	simple := req.Generation < 0 && req.MemberID == ""
	g, code := b.groups.lookup(req.Group, simple)
	switch {
	case code != 0:
		setAll(code)
		return resp
	case g == nil:
		setAll(ec(kproto.CodeIllegalGeneration))
		return resp
	}

	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	g.mu.Lock()
	out := g.stepLocked(func(time.Time) { code = g.commitCheck(req.MemberID, instanceID, req.Generation) })
	g.mu.Unlock()
	g.finish(out)
	if code != 0 {
		setAll(code)
		return resp
	}

	var writes []offsetWrite
	var where [][2]int
	maxMeta := int(b.groups.cfg.OffsetMetadataMaxBytes)
	for i, t := range req.Topics {
		tp := b.cluster.topic(t.Topic)
		for j, p := range t.Partitions {
			var meta string
			if p.Metadata != nil {
				meta = *p.Metadata
			}
			switch {
			case !r.c.allowedTopic(authz.OpRead, t.Topic): // not written; offsetCommitCode answers it
			case tp == nil || p.Partition < 0 || int(p.Partition) >= len(tp.replicas):
				codes[i][j] = ec(kproto.CodeUnknownTopicOrPartition)
			case len(meta) > maxMeta:
				codes[i][j] = codeOffsetMetadataTooLarge
			default:
				epoch := p.LeaderEpoch
				if req.Version < 6 {
					epoch = -1
				}
				writes = append(writes, offsetWrite{tp: topicPartition{t.Topic, p.Partition},
					offset: p.Offset, leaderEpoch: epoch, metadata: meta})
				where = append(where, [2]int{i, j})
			}
		}
	}
	if len(writes) == 0 {
		return resp
	}
	if err := g.writeOffsets(writes); err != nil {
		b.log.Warn("committing offsets to ZooKeeper", "group", req.Group, "err", err)
		for _, w := range where {
			codes[w[0]][w[1]] = ec(kproto.CodeCoordinatorNotAvailable)
		}
	}
	return resp
}
