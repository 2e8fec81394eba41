package broker

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/kproto"
)

// WriteTxnMarkers (key 27), v0-1, via kmsg: a transaction coordinator has
// the leaders of a transaction's partitions write its COMMIT or ABORT
// marker (partition_txn.go). As Kafka's KafkaApis and ReplicaManager:
//
//   - CLUSTER_ACTION on the cluster (the brokers' principals), else
//     CLUSTER_AUTHORIZATION_FAILED for every partition;
//   - a partition with no replica here: UNKNOWN_TOPIC_OR_PARTITION; one
//     this broker follows: NOT_LEADER_OR_FOLLOWER; internal topics
//     (__consumer_offsets) are written like any other;
//   - the marker's producer epoch older than the producer's:
//     INVALID_PRODUCER_EPOCH; its coordinator epoch older than the last
//     marker's: TRANSACTION_COORDINATOR_FENCED;
//   - acks=all: NOT_ENOUGH_REPLICAS when the ISR is below
//     min.insync.replicas, and each marker is answered once the high
//     watermark passes it (REQUEST_TIMED_OUT after 30 s, Kafka's
//     request.timeout.ms; NOT_ENOUGH_REPLICAS_AFTER_APPEND,
//     NOT_LEADER_OR_FOLLOWER as for Produce).
//
// The transactional offset commits of a transaction become visible (or
// go) when its marker is written to their __consumer_offsets partition:
// the group coordinator is told then (completeTxnOffsets, txn_offsets.go).

func init() { regKey(int16(kmsg.WriteTxnMarkers), 0, 1, kmsgHandler(handleWriteTxnMarkers)) }

// markerTimeout is how long a marker waits to be replicated.
const markerTimeout = 30 * time.Second

// markerWait is a written marker waiting for the high watermark.
type markerWait struct {
	code   *int16
	part   *partition
	end    int64
	minISR int
}

func handleWriteTxnMarkers(c *conn, req *kmsg.WriteTxnMarkersRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	denied := c.clusterActionDenied()
	now := c.b.now()
	var waits []markerWait
	type offsetsDone struct {
		code      *int16
		partition int32
		pid       int64
		epoch     int16
		commit    bool
	}
	var offsets []offsetsDone
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		rm.Topics = make([]kmsg.WriteTxnMarkersResponseMarkerTopic, len(m.Topics))
		for i, mt := range m.Topics {
			rt := &rm.Topics[i]
			*rt = kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = mt.Topic
			rt.Partitions = make([]kmsg.WriteTxnMarkersResponseMarkerTopicPartition, len(mt.Partitions))
			for j, p := range mt.Partitions {
				rp := &rt.Partitions[j]
				*rp = kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				if denied {
					rp.ErrorCode = int16(kproto.CodeClusterAuthorizationFailed)
					continue
				}
				w, code := c.writeMarker(mt.Topic, p, m, now)
				rp.ErrorCode = int16(code)
				if code == kproto.CodeNone {
					w.code = &rp.ErrorCode
					waits = append(waits, w)
					if mt.Topic == offsetsTopic {
						offsets = append(offsets, offsetsDone{&rp.ErrorCode, p, m.ProducerID, m.ProducerEpoch, m.Committed})
					}
				}
			}
		}
		resp.Markers = append(resp.Markers, rm)
	}
	deadline := time.Now().Add(markerTimeout)
	for _, w := range waits {
		*w.code = int16(w.part.waitCommitted(w.end, w.minISR, deadline, c.b.done))
	}
	for _, o := range offsets {
		if *o.code == 0 {
			*o.code = int16(c.b.completeTxnOffsets(o.partition, o.pid, o.epoch, o.commit))
		}
	}
	return resp, nil
}

// writeMarker appends one partition's marker on the leader.
func (c *conn) writeMarker(topicName string, index int32, m kmsg.WriteTxnMarkersRequestMarker, now time.Time) (markerWait, kproto.ErrorCode) {
	t := c.b.cluster.topic(topicName)
	if t == nil || index < 0 || int(index) >= len(t.replicas) {
		return markerWait{}, kproto.CodeUnknownTopicOrPartition
	}
	part := t.replica(index) // led or followed: a follower answers NOT_LEADER_OR_FOLLOWER (appendMarker)
	if part == nil {
		return markerWait{}, kproto.CodeUnknownTopicOrPartition
	}
	minISR := c.b.minInsyncReplicas(t)
	if n := part.isrSize(); part.isLeader() && n < minISR {
		return markerWait{}, kproto.CodeNotEnoughReplicas
	}
	end, code, msg := part.appendMarker(m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed, now)
	if code != kproto.CodeNone {
		c.log.Debug("transaction marker refused", "topic", topicName, "partition", index, "producer", m.ProducerID, "code", code, "why", msg)
		return markerWait{}, code
	}
	return markerWait{part: part, end: end, minISR: minISR}, kproto.CodeNone
}
