// Package ktxn has the kmsg requests the transaction tests send while
// they play the transaction coordinator by hand: transactional batches,
// WriteTxnMarkers, and the read_committed views of a partition (ListOffsets
// at an isolation level, raw read_committed fetches, DescribeProducers).
// The client is a kgo client of one broker whose versions stop at Kafka
// 3.0's, so that Fetch names topics (v12), not ids.
package ktxn

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Direct is a client of the broker at addr only.
func Direct(addr string) (*kgo.Client, error) {
	return kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.MaxVersions(kversion.V3_0_0()))
}

// Send sends req to cl's broker (10 s at most).
func Send[R kmsg.Response](cl *kgo.Client, req kmsg.Request) (R, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var zero R
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return zero, err
	}
	return resp.(R), nil
}

// Batch is a transactional record batch of (pid, epoch) from sequence
// seq, one record per value (null keys).
func Batch(pid int64, epoch int16, seq int32, values ...string) []byte {
	kvs := make([][2]*string, len(values))
	for i := range values {
		kvs[i][1] = &values[i]
	}
	return KeyedBatch(pid, epoch, seq, kvs...)
}

// KeyedBatch is Batch with a key per record (nil: null).
func KeyedBatch(pid int64, epoch int16, seq int32, kvs ...[2]*string) []byte {
	var recs []byte
	for i, kv := range kvs {
		v := *kv[1]
		var r []byte
		r = append(r, 0)
		r = binary.AppendVarint(r, 0)
		r = binary.AppendVarint(r, int64(i))
		if k := kv[0]; k != nil {
			r = binary.AppendVarint(r, int64(len(*k)))
			r = append(r, *k...)
		} else {
			r = binary.AppendVarint(r, -1)
		}
		r = binary.AppendVarint(r, int64(len(v)))
		r = append(r, v...)
		r = binary.AppendVarint(r, 0)
		recs = binary.AppendVarint(recs, int64(len(r)))
		recs = append(recs, r...)
	}
	ts := time.Now().UnixMilli()
	b := make([]byte, 61, 61+len(recs))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(recs)))
	b[16] = 2
	binary.BigEndian.PutUint16(b[21:], 0x10) // transactional
	binary.BigEndian.PutUint32(b[23:], uint32(len(kvs)-1))
	binary.BigEndian.PutUint64(b[27:], uint64(ts))
	binary.BigEndian.PutUint64(b[35:], uint64(ts))
	binary.BigEndian.PutUint64(b[43:], uint64(pid))
	binary.BigEndian.PutUint16(b[51:], uint16(epoch))
	binary.BigEndian.PutUint32(b[53:], uint32(seq))
	binary.BigEndian.PutUint32(b[57:], uint32(len(kvs)))
	b = append(b, recs...)
	FixCRC(b)
	return b
}

// FixCRC recomputes a batch's CRC-32C after a change.
func FixCRC(b []byte) {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
}

// InitPID is a fresh producer id and epoch (idempotent InitProducerId).
func InitPID(cl *kgo.Client) (int64, int16, error) {
	resp, err := Send[*kmsg.InitProducerIDResponse](cl, kmsg.NewPtrInitProducerIDRequest())
	if err != nil {
		return 0, 0, err
	}
	if resp.ErrorCode != 0 {
		return 0, 0, kerrFor(resp.ErrorCode)
	}
	return resp.ProducerID, resp.ProducerEpoch, nil
}

// Produce sends batch with transactional id txnID (acks=all) and
// returns the partition's answer.
func Produce(cl *kgo.Client, txnID, topic string, partition int32, batch []byte) (kmsg.ProduceResponseTopicPartition, error) {
	req := kmsg.NewPtrProduceRequest()
	if txnID != "" {
		req.TransactionID = &txnID
	}
	req.Acks, req.TimeoutMillis = -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := Send[*kmsg.ProduceResponse](cl, req)
	if err != nil {
		return kmsg.ProduceResponseTopicPartition{}, err
	}
	return resp.Topics[0].Partitions[0], nil
}

// Marker has the broker write (pid, epoch)'s COMMIT or ABORT marker on
// topic's partition as a coordinator in coordinatorEpoch; it returns the
// partition's code.
func Marker(cl *kgo.Client, topic string, partition int32, pid int64, epoch int16, coordinatorEpoch int32, commit bool) (int16, error) {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, commit, coordinatorEpoch
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, []int32{partition}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp, err := Send[*kmsg.WriteTxnMarkersResponse](cl, req)
	if err != nil {
		return 0, err
	}
	return resp.Markers[0].Topics[0].Partitions[0].ErrorCode, nil
}

// Latest is ListOffsets' latest offset at an isolation level (1:
// read_committed, the last stable offset).
func Latest(cl *kgo.Client, topic string, partition int32, isolation int8) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = partition, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := Send[*kmsg.ListOffsetsResponse](cl, req)
	if err != nil {
		return 0, err
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return 0, kerrFor(p.ErrorCode)
	}
	return p.Offset, nil
}

// FetchCommitted is a raw read_committed fetch of a partition at offset.
func FetchCommitted(cl *kgo.Client, topic string, partition int32, offset int64) (kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.IsolationLevel, req.MaxBytes, req.MaxWaitMillis, req.ReplicaID = 1, 1<<20, 100, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = partition, offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := Send[*kmsg.FetchResponse](cl, req)
	if err != nil {
		return kmsg.FetchResponseTopicPartition{}, err
	}
	return resp.Topics[0].Partitions[0], nil
}

// Producers is DescribeProducers of a partition.
func Producers(cl *kgo.Client, topic string, partition int32) ([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, error) {
	req := kmsg.NewPtrDescribeProducersRequest()
	dt := kmsg.NewDescribeProducersRequestTopic()
	dt.Topic, dt.Partitions = topic, []int32{partition}
	req.Topics = append(req.Topics, dt)
	resp, err := Send[*kmsg.DescribeProducersResponse](cl, req)
	if err != nil {
		return nil, err
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		return nil, kerrFor(p.ErrorCode)
	}
	return p.ActiveProducers, nil
}
