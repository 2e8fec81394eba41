package broker

import (
	"cmp"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/authz"
	"github.com/zkafka/zkafka/kproto"
)

// DescribeProducers (key 61), v0, via kmsg, as Kafka 3.7's
// ReplicaManager.activeProducerState: the idempotent producers of each
// partition this broker holds a replica of (leader or follower, as
// Kafka: the admin client asks the leader): producer id, epoch, the
// sequence of its last record and the max timestamp of its last batch,
// the coordinator epoch of its last transaction marker and the first
// offset of its open transaction (-1: none; producers known only by a
// marker are listed with last sequence -1). Per partition:
// TOPIC_AUTHORIZATION_FAILED without READ on the topic,
// UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER where this broker
// holds no replica.

func init() { regKey(kproto.KeyDescribeProducers, 0, 0, kmsgHandler(handleDescribeProducers)) }

func handleDescribeProducers(c *conn, req *kmsg.DescribeProducersRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, rt := range req.Topics {
		out := kmsg.NewDescribeProducersResponseTopic()
		out.Topic = rt.Topic
		allowed := c.allowedTopic(authz.OpRead, rt.Topic)
		t := c.b.cluster.topic(rt.Topic)
		for _, index := range rt.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = index
			switch {
			case !allowed:
				rp.ErrorCode = int16(kproto.CodeTopicAuthorizationFailed)
			case t == nil || index < 0 || int(index) >= len(t.replicas):
				rp.ErrorCode = int16(kproto.CodeUnknownTopicOrPartition)
			case t.replica(index) == nil:
				rp.ErrorCode = int16(kproto.CodeNotLeaderOrFollower)
			default:
				rp.ActiveProducers = t.replica(index).describeProducers()
			}
			out.Partitions = append(out.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, out)
	}
	return resp, nil
}

// describeProducers lists the partition's idempotent producers by id.
// The last timestamp is read from the producer's last batch in the log
// (-1 if it is gone).
func (p *partition) describeProducers() []kmsg.DescribeProducersResponseTopicPartitionActiveProducer {
	type last struct {
		pid         int64
		epoch       int16
		seq         int32
		offset      int64
		coordinator int32
		txnStart    int64
	}
	var lasts []last
	p.mu.Lock()
	for pid, st := range p.mu.producers {
		l := last{pid, st.epoch, -1, -1, st.coordinatorEpoch, st.txnFirst}
		if b := st.last(); b != nil {
			l.seq, l.offset = b.lastSeq, b.firstOffset
		} else if st.txnFirst < 0 && st.coordinatorEpoch < 0 {
			continue
		}
		lasts = append(lasts, l)
	}
	p.mu.Unlock()
	slices.SortFunc(lasts, func(a, b last) int { return cmp.Compare(a.pid, b.pid) })
	out := make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, 0, len(lasts))
	for _, l := range lasts {
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = l.pid, int32(l.epoch), l.seq
		ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = -1, l.coordinator, l.txnStart
		if l.offset >= 0 {
			ap.LastTimestamp = p.batchMaxTimestamp(l.offset, l.pid)
		}
		out = append(out, ap)
	}
	return out
}

// batchMaxTimestamp is the max timestamp of producer pid's batch at
// offset, or -1 when the log no longer holds it there.
func (p *partition) batchMaxTimestamp(offset, pid int64) int64 {
	data, err := p.log.ReadBatches(offset, 1, nil)
	if err != nil || len(data) < kproto.BatchHeaderSize {
		return -1
	}
	b := kproto.Batch(data)
	if b.BaseOffset() != offset || b.ProducerID() != pid {
		return -1
	}
	return b.MaxTimestamp()
}
