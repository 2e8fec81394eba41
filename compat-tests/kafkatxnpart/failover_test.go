package kafkatxnpart

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/compat-tests/internal/ktxn"
)

// leaderOf waits (20 s) until adm's broker names a leader of topic's
// partition 0 other than not, with isr replicas in sync.
func leaderOf(t *testing.T, adm *kadm.Client, topic string, not int32, isr int) int32 {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopics(ctxT(t), topic)
		if err == nil {
			if pd, ok := td[topic].Partitions[0]; ok && pd.Leader >= 0 && pd.Leader != not && len(pd.ISR) >= isr {
				return pd.Leader
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader of %s-0 (other than %d, ISR %d): %+v %v", topic, not, isr, td, err)
		}
	}
}

// waitLed waits until e answers ListOffsets for topic's partition 0: it
// applied its leadership (the metadata may name it first).
func waitLed(t *testing.T, e *env, topic string) {
	t.Helper()
	cl := direct(t, e.Addr)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := ktxn.Latest(cl, topic, 0, 0); err == nil {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%s never led %s-0: %v", e.Addr, topic, err)
		}
	}
}

// waitLSO polls the broker's read_committed latest offset until want.
func waitLSO(t *testing.T, e *env, topic string, want int64) {
	t.Helper()
	cl := direct(t, e.Addr)
	var got int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = latest(t, cl, topic, 0, 1); got == want {
			return
		}
	}
	t.Fatalf("LSO of %s-0 at %s: %d, want %d", topic, e.Addr, got, want)
}

// TestFailoverKeepsTransactions: three brokers, RF 3. The transactions
// are written on the leader; when it stops, the follower that takes over
// built the same producer state and aborted index from the replicated
// batches and markers: the same LSO (the open transaction), the same
// aborted transaction, and the open transaction's COMMIT on the new leader
// makes it visible to a read_committed consumer.
func TestFailoverKeepsTransactions(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, kafkaenv.Configure(unverified))
	adm := cl.Broker(1).Admin()
	if resp, err := adm.CreateTopic(ctxT(t), 1, 3, nil, "fo"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	old := leaderOf(t, adm, "fo", -1, 3)
	waitLed(t, cl.Broker(old), "fo")
	a, b, epochA, _ := txnScenario(t, clientish{direct(t, cl.Broker(old).Addr)}, "fo")
	waitLSO(t, cl.Broker(old), "fo", 7)
	follower := cl.Broker(old%3 + 1)
	if code := marker(t, direct(t, follower.Addr), "fo", 0, a, epochA, 0, true); code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("a marker sent to a follower: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}

	cl.Broker(old).Stop()
	other := cl.Broker(1)
	if old == 1 {
		other = cl.Broker(2)
	}
	nl := leaderOf(t, other.Admin(), "fo", old, 1)
	leader := cl.Broker(nl)
	waitLSO(t, leader, "fo", 7)
	lc := direct(t, leader.Addr)
	f := fetchCommitted(t, lc, "fo", 0, 0)
	if len(f.AbortedTransactions) != 1 || f.AbortedTransactions[0].ProducerID != b || f.AbortedTransactions[0].FirstOffset != 4 {
		t.Fatalf("aborted transactions on the new leader %d: %+v", nl, f.AbortedTransactions)
	}
	if code := marker(t, lc, "fo", 0, a, epochA, 0, true); code != 0 {
		t.Fatalf("COMMIT on the new leader: %d", code)
	}
	waitLSO(t, leader, "fo", 10)
	if got := consumeCommitted(t, []string{leader.Addr}, "fo", 5); !slices.Equal(got, []string{"a1", "a2", "a3", "c1", "c2"}) {
		t.Fatalf("read_committed consumer got %q", got)
	}
}
