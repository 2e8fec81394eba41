package kafkatxnpart

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/compat-tests/internal/ktxn"
)

// txnScenario writes, on topic's partition 0 through cl: a committed
// transaction of pid a (offsets 0-2, marker 3), an aborted one of pid b
// (4-5, marker 6) and an open one of a (7-8). It returns the pids.
func txnScenario(t *testing.T, cl clientish, topic string) (a, b int64, epochA, epochB int16) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := ktxn.Latest(cl.c, topic, 0, 0); err == nil {
			break // the broker leads the new topic's partition
		} else if time.Now().After(deadline) {
			t.Fatalf("%s-0 never led: %v", topic, err)
		}
	}
	a, epochA = initPID(t, cl.c)
	b, epochB = initPID(t, cl.c)
	for _, step := range []struct {
		pid    int64
		epoch  int16
		seq    int32
		values []string
		base   int64
	}{
		{a, epochA, 0, []string{"a1", "a2", "a3"}, 0},
	} {
		if r := produceTxn(t, cl.c, "txn-a", topic, 0, txnBatch(step.pid, step.epoch, step.seq, step.values...)); r.ErrorCode != 0 || r.BaseOffset != step.base {
			t.Fatalf("produce %v: %+v", step.values, r)
		}
	}
	if code := marker(t, cl.c, topic, 0, a, epochA, 0, true); code != 0 {
		t.Fatalf("COMMIT marker: %v", kerr.ErrorForCode(code))
	}
	if r := produceTxn(t, cl.c, "txn-b", topic, 0, txnBatch(b, epochB, 0, "b1", "b2")); r.ErrorCode != 0 || r.BaseOffset != 4 {
		t.Fatalf("produce b: %+v", r)
	}
	if code := marker(t, cl.c, topic, 0, b, epochB, 0, false); code != 0 {
		t.Fatalf("ABORT marker: %v", kerr.ErrorForCode(code))
	}
	if r := produceTxn(t, cl.c, "txn-a", topic, 0, txnBatch(a, epochA, 3, "c1", "c2")); r.ErrorCode != 0 || r.BaseOffset != 7 {
		t.Fatalf("produce c: %+v", r)
	}
	return a, b, epochA, epochB
}

// TestReadCommitted: a read_committed consumer sees the committed
// transaction only, stalls at the open one (the LSO) and sees it once
// committed; raw fetches report the LSO and the aborted transaction;
// ListOffsets and DescribeProducers say the same.
func TestReadCommitted(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(unverified))
	if _, err := e.Admin().CreateTopic(ctxT(t), 1, 1, nil, "rc"); err != nil {
		t.Fatal(err)
	}
	cl := clientish{direct(t, e.Addr)}
	a, b, epochA, _ := txnScenario(t, cl, "rc")

	if lso, hw := latest(t, cl.c, "rc", 0, 1), latest(t, cl.c, "rc", 0, 0); lso != 7 || hw != 9 {
		t.Fatalf("ListOffsets latest: read_committed %d (want 7, the open transaction's start), read_uncommitted %d (want 9)", lso, hw)
	}
	f := fetchCommitted(t, cl.c, "rc", 0, 0)
	if f.ErrorCode != 0 || f.HighWatermark != 9 || f.LastStableOffset != 7 {
		t.Fatalf("read_committed fetch: error %d, high watermark %d, LSO %d; want 9 and 7", f.ErrorCode, f.HighWatermark, f.LastStableOffset)
	}
	if want := []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: b, FirstOffset: 4}}; !slices.EqualFunc(f.AbortedTransactions, want,
		func(x, y kmsg.FetchResponseTopicPartitionAbortedTransaction) bool {
			return x.ProducerID == y.ProducerID && x.FirstOffset == y.FirstOffset
		}) {
		t.Fatalf("aborted transactions %+v, want %+v", f.AbortedTransactions, want)
	}
	if f2 := fetchCommitted(t, cl.c, "rc", 0, 7); len(f2.RecordBatches) != 0 {
		t.Fatalf("a read_committed fetch at the LSO returned %d bytes of the open transaction", len(f2.RecordBatches))
	}
	if after := fetchCommitted(t, cl.c, "rc", 0, 7); len(after.AbortedTransactions) != 0 {
		t.Fatalf("aborted transactions past the abort: %+v", after.AbortedTransactions)
	}
	if got := consumeCommitted(t, []string{e.Addr}, "rc", 3); !slices.Equal(got, []string{"a1", "a2", "a3"}) {
		t.Fatalf("read_committed consumer got %q, want a1 a2 a3", got)
	}
	starts := map[int64]int64{}
	for _, ap := range must(t, func() ([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, error) {
		return ktxn.Producers(cl.c, "rc", 0)
	}) {
		starts[ap.ProducerID] = ap.CurrentTxnStartOffset
	}
	if starts[a] != 7 || starts[b] != -1 {
		t.Fatalf("DescribeProducers current transaction starts %v: want %d at 7, %d at -1", starts, a, b)
	}

	if code := marker(t, cl.c, "rc", 0, a, epochA, 0, true); code != 0 {
		t.Fatalf("COMMIT marker: %v", kerr.ErrorForCode(code))
	}
	if lso := latest(t, cl.c, "rc", 0, 1); lso != 10 {
		t.Fatalf("LSO after the commit: %d, want 10", lso)
	}
	if got := consumeCommitted(t, []string{e.Addr}, "rc", 5); !slices.Equal(got, []string{"a1", "a2", "a3", "c1", "c2"}) {
		t.Fatalf("read_committed consumer got %q, want a1 a2 a3 c1 c2", got)
	}
}

// TestBadMarkers: Kafka's errors for markers of a stale producer epoch,
// a stale coordinator epoch, an unknown partition, and control batches
// produced by a client.
func TestBadMarkers(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(unverified))
	if _, err := e.Admin().CreateTopic(ctxT(t), 1, 1, nil, "bad"); err != nil {
		t.Fatal(err)
	}
	cl := direct(t, e.Addr)
	pid, epoch := initPID(t, cl)
	if r := produceTxn(t, cl, "bad-txn", "bad", 0, txnBatch(pid, epoch+1, 0, "x")); r.ErrorCode != 0 {
		t.Fatalf("produce: %+v", r)
	}
	if code := marker(t, cl, "bad", 0, pid, epoch+1, 5, false); code != 0 {
		t.Fatalf("ABORT marker: %v", kerr.ErrorForCode(code))
	}
	for _, tc := range []struct {
		name             string
		topic            string
		partition        int32
		epoch            int16
		coordinatorEpoch int32
		want             *kerr.Error
	}{
		{"stale producer epoch", "bad", 0, epoch, 5, kerr.InvalidProducerEpoch},
		{"stale coordinator epoch", "bad", 0, epoch + 1, 4, kerr.TransactionCoordinatorFenced},
		{"unknown topic", "nope", 0, epoch + 1, 5, kerr.UnknownTopicOrPartition},
		{"unknown partition", "bad", 7, epoch + 1, 5, kerr.UnknownTopicOrPartition},
	} {
		if code := marker(t, cl, tc.topic, tc.partition, pid, tc.epoch, tc.coordinatorEpoch, true); code != tc.want.Code {
			t.Errorf("%s: %v, want %v", tc.name, kerr.ErrorForCode(code), tc.want)
		}
	}
	// The producer's data in its old epoch is fenced too.
	if r := produceTxn(t, cl, "bad-txn", "bad", 0, txnBatch(pid, epoch, 1, "old")); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("a batch of the old epoch after the bumped marker: %v, want INVALID_PRODUCER_EPOCH", kerr.ErrorForCode(r.ErrorCode))
	}
	// A newer coordinator epoch and the same producer epoch are fine.
	if code := marker(t, cl, "bad", 0, pid, epoch+1, 6, true); code != 0 {
		t.Fatalf("marker of a newer coordinator: %v", kerr.ErrorForCode(code))
	}
	ctrl := txnBatch(pid, epoch+1, 1, "x")
	ctrl[22] |= 0x20 // control
	fixCRC(ctrl)
	if r := produceTxn(t, cl, "bad-txn", "bad", 0, ctrl); r.ErrorCode != kerr.InvalidRecord.Code {
		t.Fatalf("a client's control batch: %v, want INVALID_RECORD", kerr.ErrorForCode(r.ErrorCode))
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "bad"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = txnBatch(pid, epoch+1, 1, "y")
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	if r := send[*kmsg.ProduceResponse](t, cl, req).Topics[0].Partitions[0]; r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("a transactional batch without a transactional id: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}
