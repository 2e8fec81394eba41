package replication

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestFollowersServeNoClients: a broker that follows a partition answers
// produce for it with NOT_LEADER_OR_FOLLOWER, and its log is unchanged. A
// consumer fetch of v11+ is served from the follower's log up to its high
// watermark, as Kafka does since KIP-392 (compat-tests/racks tests the
// rest): here an empty log, no error.
func TestFollowersServeNoClients(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(30*time.Second))
	createTopic(t, cl, "fl", 1, 3, nil)
	leader := leaderOf(t, cl, "fl", 0)
	follower := leader%3 + 1
	c := client(t, cl)
	ctx := ctxT(t)
	fb := c.Broker(int(follower))
	preq := kmsg.NewPtrProduceRequest()
	preq.Acks, preq.TimeoutMillis = -1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "fl"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = oneRecordBatch([]byte("to the follower"))
	pt.Partitions = append(pt.Partitions, pp)
	preq.Topics = append(preq.Topics, pt)
	presp, err := preq.RequestWith(ctx, fb)
	if err != nil || presp.Topics[0].Partitions[0].ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce to follower %d: %+v %v", follower, presp, err)
	}
	freq := kmsg.NewPtrFetchRequest()
	freq.ReplicaID, freq.MaxWaitMillis, freq.MaxBytes, freq.SessionEpoch = -1, 10, 1<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	td, err := kadm.NewClient(c).ListTopics(ctx, "fl")
	if err != nil {
		t.Fatal(err)
	}
	ft.Topic, ft.TopicID = "fl", td["fl"].ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	freq.Topics = append(freq.Topics, ft)
	kr, err := fb.Request(ctx, freq)
	fresp, _ := kr.(*kmsg.FetchResponse)
	if err != nil || fresp.Topics[0].Partitions[0].ErrorCode != 0 || len(fresp.Topics[0].Partitions[0].RecordBatches) != 0 {
		t.Fatalf("consumer fetch from follower %d: %+v %v", follower, fresp, err)
	}
	// The same batch goes to the leader.
	presp, err = preq.RequestWith(ctx, c.Broker(int(leader)))
	if err != nil || presp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("produce to the leader: %+v %v", presp, err)
	}
}

// oneRecordBatch is a record batch (magic 2) holding one record.
func oneRecordBatch(value []byte) []byte {
	var r []byte
	r = append(r, 0)               // attributes
	r = binary.AppendVarint(r, 0)  // timestamp delta
	r = binary.AppendVarint(r, 0)  // offset delta
	r = binary.AppendVarint(r, -1) // key
	r = binary.AppendVarint(r, int64(len(value)))
	r = append(r, value...)
	r = binary.AppendVarint(r, 0) // headers
	recs := binary.AppendVarint(nil, int64(len(r)))
	recs = append(recs, r...)
	b := make([]byte, 61, 61+len(recs))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(recs)))
	b[16] = 2
	now := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint64(b[27:], now)
	binary.BigEndian.PutUint64(b[35:], now)
	binary.BigEndian.PutUint64(b[43:], ^uint64(0)) // producer id -1
	binary.BigEndian.PutUint16(b[51:], 0xffff)
	binary.BigEndian.PutUint32(b[53:], 0xffffffff)
	binary.BigEndian.PutUint32(b[57:], 1)
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}
