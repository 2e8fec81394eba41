package replication

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestDivergedFollowerTruncated: a leader writes records under its
// leader epoch that no follower copies (its follower stopped and left
// the ISR), then stops; the follower returns and is elected uncleanly
// (unclean.leader.election.enable) and writes other records at the same
// offsets under a newer epoch. When the old leader returns as a
// follower, the new leader answers its fetch with DivergingEpoch and it
// truncates its unreplicated records (KIP-101/KIP-320), then copies the
// new leader's: both logs end identical, and consumers see the new
// records, never the lost ones.
func TestDivergedFollowerTruncated(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(30*time.Second))
	yes := "true"
	createTopic(t, cl, "dv", 1, 2, map[string]*string{"unclean.leader.election.enable": &yes})
	z := cl.Brokers[0].ZK()
	s := waitState(t, cl, z, "dv", 0, "both replicas in the ISR", func(s partitionState) bool { return len(s.ISR) == 2 })
	a := s.Leader
	b := s.ISR[0]
	if b == a {
		b = s.ISR[1]
	}
	ctx := ctxT(t)
	produce := func(acks kgo.Acks, prefix string, n int) {
		t.Helper()
		p := client(t, cl, kgo.DefaultProduceTopic("dv"), kgo.RequiredAcks(acks), kgo.DisableIdempotentWrite(),
			kgo.RecordDeliveryTimeout(30*time.Second))
		for i := 0; i < n; i++ {
			if err := p.ProduceSync(ctx, kgo.StringRecord(prefix+strconv.Itoa(i))).FirstErr(); err != nil {
				t.Fatalf("produce %s%d: %v", prefix, i, err)
			}
		}
		p.Close()
	}
	produce(kgo.AllISRAcks(), "both-", 10)
	cl.Broker(b).Stop()
	waitState(t, cl, z, "dv", 0, "the leader alone in the ISR", isrIs(a))
	produce(kgo.LeaderAck(), "lost-", 5) // on a only
	cl.Broker(a).Stop()
	waitState(t, cl, z, "dv", 0, "offline", func(s partitionState) bool { return s.Leader == -1 })
	cl.Broker(b).Start()
	s = waitState(t, cl, z, "dv", 0, "led uncleanly by the follower", func(s partitionState) bool { return s.Leader == b })
	produce(kgo.AllISRAcks(), "new-", 3)
	cl.Broker(a).Start()
	waitState(t, cl, z, "dv", 0, "the old leader back in the ISR", isrIs(sorted(a, b)...))
	got := consumeAll(t, cl, "dv", 13)
	for i, r := range got {
		want := "both-" + strconv.Itoa(i)
		if i >= 10 {
			want = "new-" + strconv.Itoa(i-10)
		}
		if string(r.Value) != want || r.Offset != int64(i) {
			t.Fatalf("offset %d: %q, want %q", r.Offset, r.Value, want)
		}
	}
	for _, e := range cl.Brokers {
		e.Stop()
	}
	_, la := logBytes(t, cl.Broker(a), "dv", 0)
	_, lb := logBytes(t, cl.Broker(b), "dv", 0)
	if !bytes.Equal(la, lb) || bytes.Contains(la, []byte("lost-")) {
		t.Fatalf("old leader %d bytes, new leader %d bytes; lost records kept: %v", len(la), len(lb), bytes.Contains(la, []byte("lost-")))
	}
}
