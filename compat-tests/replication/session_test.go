package replication

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestFollowersReplicateOverIncrementalSessions: an RF 3 topic of 60
// partitions on three brokers. The followers fetch in incremental fetch
// sessions (each leader caches a session per follower holding the
// partitions it leads), records produced with acks=all to every
// partition reach every replica byte for byte, and a franz-go consumer of
// all 60 partitions, with its fetch sessions on (kgo's default), reads
// every record and gets incremental answers (fetch responses far smaller
// than a full answer of 60 partitions). Idle, the followers' fetches
// carry next to no partitions.
func TestFollowersReplicateOverIncrementalSessions(t *testing.T) {
	const parts, perPart = 60, 20
	cl := kafkaenv.StartCluster(t, 3, fastReplication(30*time.Second))
	createTopic(t, cl, "sess", parts, 3, nil)
	p := client(t, cl, kgo.DefaultProduceTopic("sess"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := ctxT(t)
	for round := 0; round < perPart; round += 5 {
		var rs []*kgo.Record
		for part := int32(0); part < parts; part++ {
			for i := round; i < round+5; i++ {
				rs = append(rs, &kgo.Record{Partition: part, Value: []byte(fmt.Sprintf("p%d-%d", part, i))})
			}
		}
		if err := p.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	// Every leader holds one session per follower with the partitions it
	// leads: 60 partitions times two followers in all.
	waitFor(t, "followers' sessions cached", func() bool {
		n := 0
		for _, e := range cl.Brokers {
			s, ps := e.Broker().FetchSessions()
			if s < 2 {
				return false
			}
			n += ps
		}
		return n == 2*parts
	})

	var small, fetches atomic.Int64
	hook := fetchReadHook{small: &small, all: &fetches, below: 200}
	offsets := map[int32]kgo.Offset{}
	for part := int32(0); part < parts; part++ {
		offsets[part] = kgo.NewOffset().AtStart()
	}
	c := client(t, cl, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"sess": offsets}), kgo.WithHooks(hook),
		kgo.FetchMaxWait(100*time.Millisecond))
	got := map[int32][]string{}
	n := 0
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for n < parts*perPart {
		fs := c.PollFetches(cctx)
		if cctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", n, parts*perPart)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], string(r.Value))
			n++
		})
	}
	for part := int32(0); part < parts; part++ {
		for i, v := range got[part] {
			if v != fmt.Sprintf("p%d-%d", part, i) {
				t.Fatalf("partition %d record %d: %q", part, i, v)
			}
		}
		if len(got[part]) != perPart {
			t.Fatalf("partition %d: %d records", part, len(got[part]))
		}
	}
	// Idle now: the consumer's incremental fetches are answered with no
	// partition at all (a full answer of 60 partitions is over 2 KB).
	waitFor(t, "incremental (small) fetch answers to the consumer", func() bool { return small.Load() >= 3 })
	c.Close()
	idleFollowerFetches(t, cl)

	for _, e := range cl.Brokers {
		e.Stop()
	}
	for part := 0; part < parts; part++ {
		start0, want := logBytes(t, cl.Brokers[0], "sess", part)
		if len(want) == 0 {
			t.Fatalf("partition %d: broker 1 holds no data", part)
		}
		for _, e := range cl.Brokers[1:] {
			start, data := logBytes(t, e, "sess", part)
			if start != start0 || !bytes.Equal(data, want) {
				t.Fatalf("partition %d, broker %d: log start %d, %d bytes; broker 1: start %d, %d bytes",
					part, e.Config.BrokerID, start, len(data), start0, len(want))
			}
		}
	}
}

// idleFollowerFetches checks that the followers' fetches of idle
// partitions carry next to none of them (each broker leads 20 partitions
// that a full fetch would restate): over windows of ten fetches, at most
// five windows, one averages at most one partition a fetch.
func idleFollowerFetches(t *testing.T, cl *kafkaenv.Cluster) {
	t.Helper()
	total := func() (f, p int64) {
		for _, e := range cl.Brokers {
			n, m := e.Broker().FollowerFetches()
			f, p = f+n, p+m
		}
		return f, p
	}
	var per []float64
	for range 5 {
		f0, p0 := total()
		waitFor(t, "ten more follower fetches", func() bool { f, _ := total(); return f >= f0+10 })
		f1, p1 := total()
		per = append(per, float64(p1-p0)/float64(f1-f0))
		if per[len(per)-1] <= 1 {
			return
		}
	}
	t.Fatalf("idle follower fetches carried %v partitions each", per)
}

// fetchReadHook counts the Fetch responses a kgo client reads, and those
// under below bytes.
type fetchReadHook struct {
	small, all *atomic.Int64
	below      int
}

func (h fetchReadHook) OnBrokerRead(_ kgo.BrokerMetadata, key int16, bytesRead int, _, _ time.Duration, err error) {
	if key != 1 || err != nil {
		return
	}
	h.all.Add(1)
	if bytesRead < h.below {
		h.small.Add(1)
	}
}

// waitFor polls ok (bounded: 30 s).
func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// TestFetchSessionErrors: over the wire, a fetch naming an unknown
// session gets FETCH_SESSION_ID_NOT_FOUND, a wrong epoch
// INVALID_FETCH_SESSION_EPOCH, and FINAL_EPOCH closes a session.
func TestFetchSessionErrors(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 1)
	createTopic(t, cl, "se", 3, 1, nil)
	kc := client(t, cl)
	id := topicID(t, kc, "se")
	ctx := ctxT(t)
	fetch := func(session, epoch int32, parts ...int32) *kmsg.FetchResponse {
		t.Helper()
		resp, err := sessionFetch(-1, id, session, epoch, 0, parts...).RequestWith(ctx, kc.Broker(1))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := fetch(12345, 1); r.ErrorCode != 70 {
		t.Fatalf("unknown session: error %d, want FETCH_SESSION_ID_NOT_FOUND", r.ErrorCode)
	}
	r := fetch(0, 0, 0, 1, 2)
	if r.ErrorCode != 0 || r.SessionID == 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 3 {
		t.Fatalf("full fetch: %+v", r)
	}
	s := r.SessionID
	if r := fetch(s, 1); r.ErrorCode != 0 || r.SessionID != s || len(r.Topics) != 0 {
		t.Fatalf("incremental fetch of idle partitions: %+v", r)
	}
	if r := fetch(s, 1); r.ErrorCode != 71 {
		t.Fatalf("stale epoch: error %d, want INVALID_FETCH_SESSION_EPOCH", r.ErrorCode)
	}
	if r := fetch(s, -1, 0); r.ErrorCode != 0 || r.SessionID != 0 {
		t.Fatalf("FINAL_EPOCH: %+v", r)
	}
	if r := fetch(s, 2); r.ErrorCode != 70 {
		t.Fatalf("closed session: error %d, want FETCH_SESSION_ID_NOT_FOUND", r.ErrorCode)
	}
}

// topicID is topic's id from Metadata.
func topicID(t testing.TB, kc *kgo.Client, topic string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctxT(t), kc)
	if err != nil || len(resp.Topics) != 1 {
		t.Fatalf("metadata: %v", err)
	}
	return resp.Topics[0].TopicID
}

// sessionFetch is a Fetch v13 of the given partitions of topic id at
// offset 0, in session (id, epoch), not waiting.
func sessionFetch(replica int32, topic [16]byte, session, epoch int32, offset int64, parts ...int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 13
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = replica, 0, 1, 10<<20
	req.SessionID, req.SessionEpoch = session, epoch
	if len(parts) > 0 {
		rt := kmsg.NewFetchRequestTopic()
		rt.TopicID = topic
		for _, p := range parts {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = p, offset, 1<<20, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// TestIncrementalFetchLongPollWakes: an incremental fetch that names no
// partition long-polls on every partition of its session and wakes when
// one of them gets records; the answer carries that partition only.
func TestIncrementalFetchLongPollWakes(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 1)
	createTopic(t, cl, "lp", 3, 1, nil)
	kc := client(t, cl, kgo.DefaultProduceTopic("lp"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	id := topicID(t, kc, "lp")
	ctx := ctxT(t)
	r, err := sessionFetch(-1, id, 0, 0, 0, 0, 1, 2).RequestWith(ctx, kc.Broker(1))
	if err != nil || r.ErrorCode != 0 || r.SessionID == 0 {
		t.Fatalf("full fetch: %+v %v", r, err)
	}
	req := sessionFetch(-1, id, r.SessionID, 1, 0)
	req.MaxWaitMillis = 30000
	start := time.Now()
	done := make(chan *kmsg.FetchResponse, 1)
	go func() {
		resp, err := req.RequestWith(ctx, kc.Broker(1))
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	// Produce once the fetch is parked (a produce before it parks is
	// answered at once, too: the records are there).
	time.Sleep(100 * time.Millisecond)
	if err := kc.ProduceSync(ctx, &kgo.Record{Partition: 2, Value: []byte("wake")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	resp := <-done
	if resp == nil {
		t.FailNow()
	}
	if waited := time.Since(start); waited > 20*time.Second {
		t.Fatalf("the long poll ran to its end (%v)", waited)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 ||
		resp.Topics[0].Partitions[0].Partition != 2 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("answer %+v", resp)
	}
}

// TestFetchSessionCacheSlots: with max.incremental.fetch.session.cache.slots=1
// a second consumer's full fetch is answered in full with session id 0
// (the first session is young and a consumer's), and its fetches go on
// sessionless.
func TestFetchSessionCacheSlots(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 1, kafkaenv.Configure(func(c *broker.Config) { c.Replication.FetchSessionCacheSlots = 1 }))
	createTopic(t, cl, "slots", 2, 1, nil)
	kc := client(t, cl)
	id := topicID(t, kc, "slots")
	ctx := ctxT(t)
	first, err := sessionFetch(-1, id, 0, 0, 0, 0, 1).RequestWith(ctx, kc.Broker(1))
	if err != nil || first.ErrorCode != 0 || first.SessionID == 0 {
		t.Fatalf("first session: %+v %v", first, err)
	}
	second, err := sessionFetch(-1, id, 0, 0, 0, 0, 1).RequestWith(ctx, kc.Broker(1))
	if err != nil || second.ErrorCode != 0 || second.SessionID != 0 || len(second.Topics) != 1 || len(second.Topics[0].Partitions) != 2 {
		t.Fatalf("second full fetch: %+v %v", second, err)
	}
	if s, _ := cl.Broker(1).Broker().FetchSessions(); s != 1 {
		t.Fatalf("%d sessions cached", s)
	}
}
