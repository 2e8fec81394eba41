package replication

import (
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/kproto"
)

// TestProduceNotLeaderNamesTheLeader: a Produce v10 sent to a follower is
// answered NOT_LEADER_OR_FOLLOWER with the partition's CurrentLeader
// (leader id and epoch) and that leader's endpoint in NodeEndpoints
// (KIP-951), so that a client moves without a metadata request (v9 has
// no hint: kproto's TestProduceResponseLeaderHint). kgo, which reads the
// hint, then produces through the cluster.
func TestProduceNotLeaderNamesTheLeader(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(time.Second))
	createTopic(t, cl, "hint", 1, 3, nil)
	z := cl.Brokers[0].ZK()
	st := waitState(t, cl, z, "hint", 0, "all in the ISR", isrIs(1, 2, 3))
	leader := st.Leader
	follower := leader%3 + 1
	fc := cl.Broker(follower).Client(kgo.SeedBrokers(cl.Broker(follower).Addr))
	recs := kproto.AppendRecord(nil, 0, 0, nil, []byte("v"), 0, nil)
	batch := kproto.AppendBatch(nil, kproto.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 1}, recs)
	produce := func(version int16) *kmsg.ProduceResponse { // kgo sends its highest version the broker has
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = version, 1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "hint"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		kr, err := fc.SeedBrokers()[0].Request(ctxT(t), req)
		if err != nil {
			t.Fatal(err)
		}
		return kr.(*kmsg.ProduceResponse)
	}
	r := produce(10)
	p := r.Topics[0].Partitions[0]
	if p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce v10 to follower %d: error %d, want NOT_LEADER_OR_FOLLOWER", follower, p.ErrorCode)
	}
	if p.CurrentLeader.LeaderID != leader || p.CurrentLeader.LeaderEpoch != st.LeaderEpoch {
		t.Fatalf("CurrentLeader %+v, want leader %d epoch %d", p.CurrentLeader, leader, st.LeaderEpoch)
	}
	if len(r.Brokers) != 1 || r.Brokers[0].NodeID != leader || r.Brokers[0].Host+":"+itoa(r.Brokers[0].Port) != cl.Broker(leader).Addr {
		t.Fatalf("NodeEndpoints %+v, want leader %d at %s", r.Brokers, leader, cl.Broker(leader).Addr)
	}
	kc := client(t, cl, kgo.DefaultProduceTopic("hint"))
	if err := kc.ProduceSync(ctxT(t), kgo.StringRecord("through kgo")).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
