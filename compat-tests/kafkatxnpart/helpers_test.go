package kafkatxnpart

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/compat-tests/internal/ktxn"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

type env = kafkaenv.Env

// unverified turns KIP-890 verification off: these tests play the
// coordinator by hand, and there is none to verify with.
func unverified(c *broker.Config) { c.TxnPartitionVerification = false }

func ctxT(t testing.TB) context.Context { return kafkaenv.Context(t, 30*time.Second) }

var txnBatch = ktxn.Batch

func fixCRC(b []byte) { ktxn.FixCRC(b) }

// clientish wraps the client a scenario writes through.
type clientish struct{ c *kgo.Client }

// direct is a client of one broker only (ktxn.Direct).
func direct(t testing.TB, addr string) *kgo.Client {
	t.Helper()
	cl, err := ktxn.Direct(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func send[R kmsg.Response](t testing.TB, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	resp, err := ktxn.Send[R](cl, req)
	if err != nil {
		t.Fatalf("%T: %v", req, err)
	}
	return resp
}

// must returns f's value, failing the test on its error.
func must[T any](t testing.TB, f func() (T, error)) T {
	t.Helper()
	v, err := f()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func initPID(t testing.TB, cl *kgo.Client) (int64, int16) {
	t.Helper()
	pid, epoch, err := ktxn.InitPID(cl)
	if err != nil {
		t.Fatalf("InitProducerId: %v", err)
	}
	return pid, epoch
}

func produceTxn(t testing.TB, cl *kgo.Client, txnID, topic string, partition int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	return must(t, func() (kmsg.ProduceResponseTopicPartition, error) {
		return ktxn.Produce(cl, txnID, topic, partition, batch)
	})
}

func marker(t testing.TB, cl *kgo.Client, topic string, partition int32, pid int64, epoch int16, coordinatorEpoch int32, commit bool) int16 {
	t.Helper()
	return must(t, func() (int16, error) { return ktxn.Marker(cl, topic, partition, pid, epoch, coordinatorEpoch, commit) })
}

func latest(t testing.TB, cl *kgo.Client, topic string, partition int32, isolation int8) int64 {
	t.Helper()
	return must(t, func() (int64, error) { return ktxn.Latest(cl, topic, partition, isolation) })
}

func fetchCommitted(t testing.TB, cl *kgo.Client, topic string, partition int32, offset int64) kmsg.FetchResponseTopicPartition {
	t.Helper()
	return must(t, func() (kmsg.FetchResponseTopicPartition, error) {
		return ktxn.FetchCommitted(cl, topic, partition, offset)
	})
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

func latestErr(cl clientish, topic string) (int64, error) { return ktxn.Latest(cl.c, topic, 0, 0) }
