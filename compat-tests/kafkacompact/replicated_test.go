package kafkacompact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// TestCompactionWithFollowers: each replica cleans its own log, as in
// Kafka, and a follower fetches across ranges its leader has cleaned.
// One follower (its cleaner off, so its log holds exactly what it
// fetched) is stopped; the leader takes updates and tombstones of keys
// the follower never saw, starting right at the follower's log end, and
// cleans them away, tombstones included (delete.retention.ms=0). The
// follower then returns: its next offset lies in a gap of the leader's
// log, it continues at the next batch there is, appends the cleaned
// batches at their offsets and rejoins the ISR. The leader and the other
// follower are then stopped in turn and each new leader (the follower
// last) gives a consumer the latest value of every key and none of a
// deleted key. At the end the stopped follower's log ends where the
// leader's does and holds only offsets the producer was given, none at
// its old log end, and the same record at each offset the leader still
// holds, with the same batch bytes where the leader did not clean that
// batch again.
func TestCompactionWithFollowers(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, kafkaenv.Configure(fastCleaner, func(c *broker.Config) {
		c.Replication.LagTimeMax = 3 * time.Second
		c.Replication.FetchBackoff = 50 * time.Millisecond
	}))
	const topic = "compacted-rf3"
	cfg := map[string]*string{}
	for k, v := range map[string]string{"cleanup.policy": "compact", "segment.bytes": "4096",
		"min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "0"} {
		cfg[k] = kadm.StringPtr(v)
	}
	seed := cl.Brokers[0]
	if r, err := seed.Admin().CreateTopic(ctxT(t), 1, 3, cfg, topic); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	z := seed.ZK()
	state := waitISR(t, seed, z, topic, "all replicas in the ISR", func(s isrState) bool { return len(s.ISR) == 3 })
	leader := state.Leader
	behind := leader%3 + 1
	other := 6 - leader - behind
	m := model{}
	offsets := map[int64]bool{}
	p := cl.Brokers[0].Client(kgo.SeedBrokers(seeds(cl)...), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1000),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(60*time.Second))
	produce := func(key string, value []byte) {
		t.Helper()
		r, err := p.ProduceSync(ctxT(t), &kgo.Record{Key: []byte(key), Value: value}).First()
		if err != nil {
			t.Fatalf("produce %s: %v", key, err)
		}
		offsets[r.Offset] = true
		m[key] = value
	}
	for i := range 100 {
		produce(fmt.Sprintf("seen-%d", i%20), fmt.Appendf(nil, "seen-%d-%s", i, strings.Repeat("s", 40)))
	}
	oldEnd := int64(len(offsets)) // the follower's log end when it stops
	cl.Broker(behind).Config.Cleaner.Enable = false
	cl.Broker(behind).Stop()
	// Keys whose whole life lies after the follower stopped: the first
	// ones overwritten (the gap at the follower's log end), some deleted.
	for round := range 6 {
		for k := range 60 {
			key := fmt.Sprintf("new-%d", k)
			if round == 5 && k%4 == 0 {
				produce(key, nil)
				continue
			}
			produce(key, fmt.Appendf(nil, "new-%d-%d-%s", k, round, strings.Repeat("n", 40)))
		}
	}
	// Nudge until the leader has cleaned the follower's next offset away
	// and dropped the tombstones.
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		recs := readFrom(t, cl, leader, topic)
		why := m.checkRead(recs)
		switch {
		case why != "":
		case has(recs, oldEnd):
			why = fmt.Sprintf("offset %d not cleaned yet", oldEnd)
		default:
			why = firstAfter(recs, oldEnd)
		}
		if why == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader never cleaned: %s", why)
		}
		produce(fmt.Sprintf("seen-%d", i%20), fmt.Appendf(nil, "nudge-%d-%s", i, strings.Repeat("u", 400)))
		time.Sleep(50 * time.Millisecond)
	}
	cl.Broker(behind).Start()
	waitISR(t, seed, z, topic, "the follower back in the ISR", func(s isrState) bool { return len(s.ISR) == 3 })
	produce("last", []byte("acked by all three"))
	// The leader goes, then the other follower: the returned follower
	// leads last; each leader reads as the model.
	for _, stop := range []int32{leader, other} {
		cl.Broker(stop).Stop()
		next := waitISR(t, cl.Broker(behind), z, topic, fmt.Sprintf("a new leader after %d stopped", stop),
			func(s isrState) bool { return s.Leader >= 0 && s.Leader != stop && s.Leader != leader })
		// A new leader's high watermark reaches "last" once the
		// remaining ISR has fetched from it: poll.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			why := m.checkRead(readFrom(t, cl, next.Leader, topic))
			if why == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("reading from new leader %d: %s", next.Leader, why)
			}
		}
	}
	cl.Broker(behind).Stop()
	fb, fend := batchesOf(t, cl.Broker(behind), topic)
	lb, lend := batchesOf(t, cl.Broker(leader), topic)
	if fend != lend {
		t.Fatalf("follower's log ends at %d, the leader's at %d", fend, lend)
	}
	checkFollowerLog(t, fb, lb, offsets, oldEnd)
}

// checkFollowerLog compares the follower's batches with the leader's.
func checkFollowerLog(t *testing.T, follower, leader map[int64]kproto.Batch, produced map[int64]bool, oldEnd int64) {
	t.Helper()
	lrec := map[int64]string{}
	for _, b := range leader {
		for off, r := range recordsOf(t, b) {
			lrec[off] = r
		}
	}
	same, compared := 0, 0
	for base, b := range follower {
		for off, r := range recordsOf(t, b) {
			if !produced[off] {
				t.Fatalf("follower holds offset %d, never given to the producer", off)
			}
			if off == oldEnd {
				t.Fatalf("follower holds offset %d, cleaned on the leader before it fetched", off)
			}
			if lr, ok := lrec[off]; ok && lr != r {
				t.Fatalf("offset %d: follower %q, leader %q", off, r, lr)
			}
		}
		if lb, ok := leader[base]; ok && lb.LastOffset() == b.LastOffset() && lb.NumRecords() == b.NumRecords() {
			compared++
			if bytes.Equal(lb, b) {
				same++
			} else {
				t.Fatalf("batch at %d: the follower's bytes differ from the leader's", base)
			}
		}
	}
	if compared == 0 {
		t.Fatal("no batch held by both the leader and the follower: nothing compared")
	}
	t.Logf("follower: %d batches, leader: %d; %d identical", len(follower), len(leader), same)
}

// recordsOf is each record of b as "key=value" by offset.
func recordsOf(t *testing.T, b kproto.Batch) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	if b.Control() {
		return out
	}
	it, err := kproto.Records(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		v := "<tombstone>"
		if r.Value != nil {
			v = string(r.Value)
		}
		out[b.BaseOffset()+int64(r.OffsetDelta)] = string(r.Key) + "=" + v
	}
	return out
}

// batchesOf reads every batch of a stopped broker's replica of topic-0
// by base offset, checking that offsets strictly increase, and its log
// end offset.
func batchesOf(t *testing.T, e *kafkaenv.Env, topic string) (map[int64]kproto.Batch, int64) {
	t.Helper()
	l, err := segment.Open(filepath.Join(e.Config.LogDirs[0], topic+"-0"), segment.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out := map[int64]kproto.Batch{}
	last := int64(-1)
	for off := l.StartOffset(); off < l.NextOffset(); {
		r, err := l.Read(off, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, r.Len)
		r.ReadAt(buf, 0)
		off = r.NextOffset
		r.Release()
		it := kproto.SplitBatches(buf)
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			if b.BaseOffset() <= last {
				t.Fatalf("broker %d: batch at %d after %d", e.Config.BrokerID, b.BaseOffset(), last)
			}
			last = b.LastOffset()
			out[b.BaseOffset()] = slices.Clone(b)
		}
	}
	return out, l.NextOffset()
}

// readFrom reads topic-0 from the start through broker id (the leader),
// once the broker's metadata leads its clients to a live leader (after a
// failover it may still name the stopped one for a moment).
func readFrom(t *testing.T, cl *kafkaenv.Cluster, id int32, topic string) []*kgo.Record {
	t.Helper()
	e := cl.Broker(id)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ends, err := e.Admin().ListEndOffsets(ctxT(t), topic)
		if err == nil {
			if o, ok := ends.Lookup(topic, 0); ok && o.Err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker %d: no end offset of %s-0: %v", id, topic, err)
		}
	}
	return readAll(t, e, topic)
}

func has(recs []*kgo.Record, off int64) bool {
	return slices.ContainsFunc(recs, func(r *kgo.Record) bool { return r.Offset == off })
}

// firstAfter says why the leader's log does not have a gap at off with a
// record after it ("" when it does).
func firstAfter(recs []*kgo.Record, off int64) string {
	for _, r := range recs {
		if r.Offset > off {
			return ""
		}
	}
	return fmt.Sprintf("no record after offset %d", off)
}

func seeds(cl *kafkaenv.Cluster) []string { return cl.Seeds() }

// isrState is a partition state znode as Kafka's tools read it.
type isrState struct {
	Leader int32   `json:"leader"`
	ISR    []int32 `json:"isr"`
}

// waitISR polls (bounded) until topic-0's state znode satisfies ok.
func waitISR(t *testing.T, e *kafkaenv.Env, z *zk.Conn, topic, what string, ok func(isrState) bool) isrState {
	t.Helper()
	var s isrState
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var data []byte
		if data, _, err = z.Get(e.Path("/brokers/topics/" + topic + "/partitions/0/state")); err == nil {
			s = isrState{}
			if err = json.Unmarshal(data, &s); err == nil && ok(s) {
				return s
			}
		}
	}
	t.Fatalf("%s-0: never %s: last %+v (%v)", topic, what, s, err)
	return s
}
