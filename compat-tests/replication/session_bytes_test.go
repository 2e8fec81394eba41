package replication

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// sessionBytes is the wire bytes of one follower Fetch v13 of idle
// partitions and of its answer, full (sessionless) and incremental.
type sessionBytes struct {
	fullReq, fullResp, incReq, incResp float64
}

// measureSessionBytes fetches the n idle partitions of a topic led by
// broker 1 with broker 2's replica id (its true log end offsets, 0, so
// the fetches only restate the follower's position): rounds sessionless
// full fetches, then a session's first fetch and rounds incremental
// ones, and returns the mean request and response sizes on the wire
// (size prefix and headers included), as kgo's hooks count them.
func measureSessionBytes(t testing.TB, n int32, rounds int) sessionBytes {
	cl := kafkaenv.StartCluster(t, 2, fastReplication(30*time.Second))
	kc := client(t, cl)
	ctx := ctxT(t)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "idle", -1, -1
	for p := int32(0); p < n; p++ {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = p, []int32{1, 2}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	if resp, err := req.RequestWith(ctx, kc); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %+v %v", resp, err)
	}
	waitFor(t, "the topic led everywhere", func() bool { return loadedEverywhere(t, cl, "idle", kc) })
	id := topicID(t, kc, "idle")
	var wrote, read atomic.Int64
	h := &fetchBytesHook{wrote: &wrote, read: &read}
	fc := cl.Brokers[0].Client(kgo.SeedBrokers(cl.Broker(1).Addr), kgo.WithHooks(h))
	parts := make([]int32, n)
	for p := range parts {
		parts[p] = int32(p)
	}
	send := func(session, epoch int32, parts ...int32) *kmsg.FetchResponse {
		t.Helper()
		resp, err := sessionFetch(2, id, session, epoch, 0, parts...).RequestWith(ctx, fc.Broker(1))
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("fetch (session %d epoch %d): %v %v", session, epoch, err, resp)
		}
		return resp
	}
	send(0, -1, parts...) // the connection is up: ApiVersions is not counted below
	var out sessionBytes
	wrote.Store(0)
	read.Store(0)
	for i := 0; i < rounds; i++ {
		if r := send(0, -1, parts...); len(r.Topics) != 1 || len(r.Topics[0].Partitions) != int(n) {
			t.Fatalf("full answer of %d topics", len(r.Topics))
		}
	}
	out.fullReq, out.fullResp = float64(wrote.Load())/float64(rounds), float64(read.Load())/float64(rounds)
	session := send(0, 0, parts...).SessionID
	if session == 0 {
		t.Fatal("no session")
	}
	wrote.Store(0)
	read.Store(0)
	for i := 0; i < rounds; i++ {
		if r := send(session, int32(i+1)); len(r.Topics) != 0 {
			t.Fatalf("incremental answer of %d topics for idle partitions", len(r.Topics))
		}
	}
	out.incReq, out.incResp = float64(wrote.Load())/float64(rounds), float64(read.Load())/float64(rounds)
	return out
}

// fetchBytesHook sums the bytes of Fetch requests and responses.
type fetchBytesHook struct{ wrote, read *atomic.Int64 }

func (h *fetchBytesHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, n int, _, _ time.Duration, err error) {
	if key == 1 && err == nil {
		h.wrote.Add(int64(n))
	}
}

func (h *fetchBytesHook) OnBrokerRead(_ kgo.BrokerMetadata, key int16, n int, _, _ time.Duration, err error) {
	if key == 1 && err == nil {
		h.read.Add(int64(n))
	}
}

// TestFollowerFetchSessionSavings: for 500 idle partitions, an
// incremental follower fetch and its answer are a few dozen bytes, where
// a full fetch restates every partition both ways.
func TestFollowerFetchSessionSavings(t *testing.T) {
	b := measureSessionBytes(t, 500, 5)
	t.Logf("bytes per follower fetch of 500 idle partitions: full request %.0f, response %.0f; incremental request %.0f, response %.0f",
		b.fullReq, b.fullResp, b.incReq, b.incResp)
	if b.incReq > 100 || b.incResp > 100 || b.fullReq < 500*20 || b.fullResp < 500*20 {
		t.Fatalf("no savings: %+v", b)
	}
}

// BenchmarkFollowerFetchSession500Idle reports the bytes per follower
// fetch of 500 idle partitions, full versus incremental (issue 11's
// fetch-session figure).
//
//	go test -run '^$' -bench FollowerFetchSession -benchtime 1x ./compat-tests/replication/
func BenchmarkFollowerFetchSession500Idle(b *testing.B) {
	r := measureSessionBytes(b, 500, max(b.N, 10))
	b.ReportMetric(r.fullReq, "full-req-B")
	b.ReportMetric(r.fullResp, "full-resp-B")
	b.ReportMetric(r.incReq, "incr-req-B")
	b.ReportMetric(r.incResp, "incr-resp-B")
}
