package replication

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestFollowerBehindTheLeadersLogStart: a follower is stopped while the
// leader writes on and retention deletes the segments the follower would
// fetch next. When it returns, the leader answers OFFSET_OUT_OF_RANGE;
// the follower asks the leader's log start (ListOffsets as replica),
// empties its log, starts there and catches up: its log ends identical to
// the leader's, from the same start, and it rejoins the ISR.
func TestFollowerBehindTheLeadersLogStart(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(30*time.Second), kafkaenv.Configure(func(c *broker.Config) {
		c.LogRetentionCheck = 50 * time.Millisecond
	}))
	seg, keep := "2048", "4096"
	createTopic(t, cl, "oor", 1, 3, map[string]*string{"segment.bytes": &seg, "retention.bytes": &keep})
	z := cl.Brokers[0].ZK()
	waitState(t, cl, z, "oor", 0, "all in the ISR", isrIs(1, 2, 3))
	leader := leaderOf(t, cl, "oor", 0)
	behind := leader%3 + 1
	ctx := ctxT(t)
	p := client(t, cl, kgo.DefaultProduceTopic("oor"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0),
		kgo.RecordDeliveryTimeout(30*time.Second))
	value := strings.Repeat("v", 400)
	produce := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			if err := p.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i)+value)).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	produce(0, 5)
	cl.Broker(behind).Stop()
	produce(5, 60)
	// Wait until retention moved the leader's log start past the stopped
	// follower's log end (5).
	var start int64
	for deadline := time.Now().Add(30 * time.Second); start <= 5; time.Sleep(20 * time.Millisecond) {
		start = listStart(t, cl, "oor")
		if time.Now().After(deadline) {
			t.Fatalf("retention never moved the log start past 5 (%d)", start)
		}
	}
	cl.Broker(behind).Start()
	waitState(t, cl, z, "oor", 0, "the follower back in the ISR", isrIs(1, 2, 3))
	produce(65, 1) // acks=all: the follower holds it too
	for _, e := range cl.Brokers {
		e.Stop()
	}
	ls, la := logBytes(t, cl.Broker(leader), "oor", 0)
	fs, fa := logBytes(t, cl.Broker(behind), "oor", 0)
	// Retention runs on each replica on its own: compare from the later start.
	if fs < ls {
		t.Fatalf("follower starts at %d, before the leader's %d it was reset to", fs, ls)
	}
	if !bytes.HasSuffix(la, fa) || len(fa) == 0 {
		t.Fatalf("follower (start %d, %d bytes) is not the end of the leader's log (start %d, %d bytes)", fs, len(fa), ls, len(la))
	}
}

// listStart is the earliest offset of topic-0 (ListOffsets -2 through kadm).
func listStart(t testing.TB, cl *kafkaenv.Cluster, topic string) int64 {
	t.Helper()
	c := client(t, cl)
	defer c.Close()
	offs, err := kadmClient(c).ListStartOffsets(ctxT(t), topic)
	if err != nil {
		return -1
	}
	o, ok := offs.Lookup(topic, 0)
	if !ok || o.Err != nil {
		return -1
	}
	return o.Offset
}

// listEnd is the high watermark of topic-0 (ListOffsets -1 through kadm).
func listEnd(t testing.TB, cl *kafkaenv.Cluster, topic string) int64 {
	t.Helper()
	c := client(t, cl)
	defer c.Close()
	offs, err := kadmClient(c).ListEndOffsets(ctxT(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := offs.Lookup(topic, 0)
	if !ok || o.Err != nil {
		t.Fatalf("end offset of %s-0: %+v", topic, o)
	}
	return o.Offset
}
