package kafkatxn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/zkafkatest"
)

// TestNextTransactionWaitsForTheMarkers: the AddPartitionsToTxn that
// begins a producer's next transaction while the last one's markers are
// still being written (the WriteTxnMarkers is held by interception) is
// answered once they are, with NONE, where Kafka answers
// CONCURRENT_TRANSACTIONS and the client backs off 20 ms; held past the
// coordinator's bound (500 ms), it gets CONCURRENT_TRANSACTIONS.
func TestNextTransactionWaitsForTheMarkers(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 1, settings())
	kc := client(t, cl)
	createTopic(t, cl, kc, "next", 1, 1)
	for _, tc := range []struct {
		id   string
		hold time.Duration
		want error // nil: NONE
	}{
		{"markers-in-soon", 150 * time.Millisecond, nil},
		{"markers-held", 3 * time.Second, kerr.ConcurrentTransactions},
	} {
		t.Run(tc.id, func(t *testing.T) {
			p := client(t, cl, kgo.TransactionalID(tc.id), kgo.TransactionTimeout(60*time.Second))
			pid, epoch, err := p.ProducerID(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			held := make(chan struct{})
			cl.Broker(1).Cluster().InterceptKafka(zkafkatest.KafkaRule{Keys: []int16{kmsg.WriteTxnMarkers.Int16()}, Count: 1,
				Respond: func(kmsg.Request) kmsg.Response { close(held); time.Sleep(tc.hold); return nil }})
			if err := p.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := p.ProduceSync(ctxT(t), &kgo.Record{Topic: "next", Value: []byte(tc.id)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if err := p.EndTransaction(ctxT(t), kgo.TryCommit); err != nil {
				t.Fatalf("EndTransaction(commit): %v", err)
			}
			<-held
			got := addPartition(t, cl, tc.id, pid, epoch, "next")
			if got != tc.want {
				t.Errorf("AddPartitionsToTxn while the markers were held %v: %v, want %v", tc.hold, got, tc.want)
			}
		})
	}
}

// addPartition sends one AddPartitionsToTxn for partition 0 of topic to
// id's coordinator, as a client does (v3: v4 on are the brokers' own), and
// returns the partition's error (nil for NONE).
func addPartition(t *testing.T, cl *kafkaenv.Cluster, id string, pid int64, epoch int16, topic string) error {
	t.Helper()
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(kmsg.AddPartitionsToTxn.Int16(), 3)
	kc := client(t, cl, kgo.MaxVersions(versions))
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := kc.Broker(int(txnCoordinator(t, kc, id))).RetriableRequest(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.(*kmsg.AddPartitionsToTxnResponse)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("AddPartitionsToTxn response %+v", r)
	}
	return kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode)
}
