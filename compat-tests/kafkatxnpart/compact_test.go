package kafkatxnpart

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/compat-tests/internal/ktxn"
)

// keyedTxnBatch is a transactional batch of one keyed record.
func keyedTxnBatch(pid int64, epoch int16, seq int32, key, value string) []byte {
	return ktxn.KeyedBatch(pid, epoch, seq, [2]*string{&key, &value})
}

// TestCleanerRemovesAbortedRecords: on a compacted topic, a key's
// committed value survives a later aborted one (the cleaner leaves
// aborted records out of its offset map) and the aborted records are
// removed: after cleaning, even a read_uncommitted consumer reads the
// committed values only.
func TestCleanerRemovesAbortedRecords(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(unverified, func(c *broker.Config) {
		c.Cleaner.Backoff = 20 * time.Millisecond
	}))
	if _, err := e.Admin().CreateTopic(ctxT(t), 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"), "segment.ms": kadm.StringPtr("100")}, "cc"); err != nil {
		t.Fatal(err)
	}
	cl := clientish{direct(t, e.Addr)}
	waitLedClient(t, cl, "cc")
	a, epochA := initPID(t, cl.c)
	b, epochB := initPID(t, cl.c)
	for _, st := range []struct {
		pid        int64
		epoch      int16
		seq        int32
		key, value string
		commit     bool
	}{
		{a, epochA, 0, "k", "committed", true},
		{b, epochB, 0, "k", "aborted", false},
	} {
		if r := produceTxn(t, cl.c, "cc", "cc", 0, keyedTxnBatch(st.pid, st.epoch, st.seq, st.key, st.value)); r.ErrorCode != 0 {
			t.Fatalf("produce %s: %+v", st.value, r)
		}
		if code := marker(t, cl.c, "cc", 0, st.pid, st.epoch, 0, st.commit); code != 0 {
			t.Fatalf("marker: %d", code)
		}
	}
	// The active segment rolls after segment.ms at the next append.
	time.Sleep(150 * time.Millisecond)
	if r := produceTxn(t, cl.c, "cc", "cc", 0, keyedTxnBatch(a, epochA, 1, "z", "later")); r.ErrorCode != 0 {
		t.Fatalf("produce: %+v", r)
	}
	if code := marker(t, cl.c, "cc", 0, a, epochA, 0, true); code != 0 {
		t.Fatalf("marker: %d", code)
	}
	var got []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = readUncommitted(t, e.Addr, "cc")
		if len(got) == 2 && got[0] == "committed" && got[1] == "later" {
			return
		}
	}
	t.Fatalf("read_uncommitted after cleaning: %q, want committed later", got)
}

func waitLedClient(t *testing.T, cl clientish, topic string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := latestErr(cl, topic); err == nil {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%s-0 never led: %v", topic, err)
		}
	}
}

// readUncommitted reads topic's partition 0 to its end, read_uncommitted.
func readUncommitted(t *testing.T, addr, topic string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	end := latest(t, direct(t, addr), topic, 0, 0)
	var got []string
	ctx := ctxT(t)
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, string(r.Value))
			done = done || r.Offset >= end-2 // the last record (its marker at end-1)
		})
		if done {
			break
		}
	}
	return got
}
