package kafkatxnpart

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

type env = kafkaenv.Env

// unverified turns KIP-890 verification off: these tests play the
// coordinator by hand, and there is none to verify with.
func unverified(c *broker.Config) { c.TxnPartitionVerification = false }

func ctxT(t testing.TB) context.Context { return kafkaenv.Context(t, 30*time.Second) }

// txnBatch is a transactional record batch of (pid, epoch) from sequence
// seq, one record per value (null keys).
func txnBatch(pid int64, epoch int16, seq int32, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		var r []byte
		r = append(r, 0)
		r = binary.AppendVarint(r, 0)
		r = binary.AppendVarint(r, int64(i))
		r = binary.AppendVarint(r, -1)
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
	binary.BigEndian.PutUint32(b[23:], uint32(len(values)-1))
	binary.BigEndian.PutUint64(b[27:], uint64(ts))
	binary.BigEndian.PutUint64(b[35:], uint64(ts))
	binary.BigEndian.PutUint64(b[43:], uint64(pid))
	binary.BigEndian.PutUint16(b[51:], uint16(epoch))
	binary.BigEndian.PutUint32(b[53:], uint32(seq))
	binary.BigEndian.PutUint32(b[57:], uint32(len(values)))
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// direct is a client of one broker only, for requests sent to it.
func direct(t testing.TB, addr string) *kgo.Client {
	t.Helper()
	// Fetch v12 at most: topics by name, not by id.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.MaxVersions(kversion.V3_0_0()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func send[R kmsg.Response](t testing.TB, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	resp, err := cl.SeedBrokers()[0].Request(ctxT(t), req)
	if err != nil {
		t.Fatalf("%T: %v", req, err)
	}
	return resp.(R)
}

// initPID is a fresh producer id and epoch (idempotent InitProducerId).
func initPID(t testing.TB, cl *kgo.Client) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	resp := send[*kmsg.InitProducerIDResponse](t, cl, req)
	if resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %d", resp.ErrorCode)
	}
	return resp.ProducerID, resp.ProducerEpoch
}

// produceTxn sends a transactional batch (acks=all) and returns the
// partition's answer.
func produceTxn(t testing.TB, cl *kgo.Client, txnID, topic string, partition int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID, req.Acks, req.TimeoutMillis = &txnID, -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := send[*kmsg.ProduceResponse](t, cl, req)
	return resp.Topics[0].Partitions[0]
}

// marker has the broker write (pid, epoch)'s COMMIT or ABORT marker on
// topic's partition, as a coordinator in coordinatorEpoch; it returns the
// partition's code.
func marker(t testing.TB, cl *kgo.Client, topic string, partition int32, pid int64, epoch int16, coordinatorEpoch int32, commit bool) int16 {
	t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, commit, coordinatorEpoch
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, []int32{partition}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp := send[*kmsg.WriteTxnMarkersResponse](t, cl, req)
	return resp.Markers[0].Topics[0].Partitions[0].ErrorCode
}

// latest is ListOffsets' latest offset at an isolation level.
func latest(t testing.TB, cl *kgo.Client, topic string, partition int32, isolation int8) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = partition, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := send[*kmsg.ListOffsetsResponse](t, cl, req)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		t.Fatalf("ListOffsets: %d", p.ErrorCode)
	}
	return p.Offset
}

// fetchCommitted is a raw read_committed fetch from offset.
func fetchCommitted(t testing.TB, cl *kgo.Client, topic string, partition int32, offset int64) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.IsolationLevel, req.MaxBytes, req.MaxWaitMillis = 1, 1<<20, 100
	req.ReplicaID = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = partition, offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := send[*kmsg.FetchResponse](t, cl, req)
	return resp.Topics[0].Partitions[0]
}

// consumeCommitted reads topic's partition 0 with a kgo read_committed
// consumer until it has want records or 15 s passed; it returns their
// values.
func consumeCommitted(t testing.TB, seeds []string, topic string, want int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for len(got) < want && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// clientish wraps the client a scenario writes through.
type clientish struct{ c *kgo.Client }

func fixCRC(b []byte) {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
}
