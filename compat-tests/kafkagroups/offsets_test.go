package kafkagroups

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
)

// consumeCommit runs one group consumer until it has read n records,
// commits, and closes; it returns the values read.
func consumeCommit(t *testing.T, e *env, group, topic string, n int) []string {
	t.Helper()
	c := e.Client(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.SessionTimeout(2*time.Second), kgo.HeartbeatInterval(200*time.Millisecond))
	var got []string
	ctx := ctxT(t)
	for len(got) < n {
		fs := c.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records: %v", len(got), n, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if err := c.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	c.Close()
	return got
}

// TestOffsetsResume: committed offsets survive consumer restarts and a
// broker restart; a new consumer starts exactly after them.
func TestOffsetsResume(t *testing.T) {
	e := startBroker(t)
	const topic, group = "resume", "g-resume"
	createTopic(t, e, topic, 3)
	produce(t, e, topic, "o", 300, 3)
	if got := consumeCommit(t, e, group, topic, 300); len(got) != 300 {
		t.Fatalf("first consumer read %d", len(got))
	}
	produce(t, e, topic, "n", 90, 3)
	for _, v := range consumeCommit(t, e, group, topic, 90) {
		if !strings.HasPrefix(v, "n-") {
			t.Fatalf("second consumer re-read %s: did not resume from the commit", v)
		}
	}
	e.Restart()
	offs, err := e.Admin().FetchOffsets(ctxT(t), group)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 3; p++ {
		if o, ok := offs.Lookup(topic, p); !ok || o.At != 130 {
			t.Fatalf("partition %d offset after broker restart: %+v", p, o)
		}
	}
	produce(t, e, topic, "r", 60, 3)
	got := consumeCommit(t, e, group, topic, 60)
	for _, v := range got {
		if !strings.HasPrefix(v, "r-") {
			t.Fatalf("after broker restart the consumer read %s", v)
		}
	}
}

// TestOffsetZNodes: commits land in ZooKeeper as DESIGN.md specifies;
// members and owners are mirrored as ephemerals.
func TestOffsetZNodes(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "zn", 2)
	adm := e.Admin()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "zn", Partition: 0, At: 42, LeaderEpoch: 3, Metadata: "meta"})
	os.Add(kadm.Offset{Topic: "zn", Partition: 1, At: 7, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctxT(t), "g-zn", os); err != nil {
		t.Fatal(err)
	}
	z := e.ZK()
	data, _, err := z.Get(e.Path("/consumers/g-zn/offsets/zn/0"))
	if err != nil || string(data) != "42" {
		t.Fatalf("offsets/zn/0 = %q, %v", data, err)
	}
	data, _, err = z.Get(e.Path("/consumers/g-zn/offsets/zn/1"))
	if err != nil || string(data) != "7" {
		t.Fatalf("offsets/zn/1 = %q, %v", data, err)
	}
	data, _, err = z.Get(e.Path("/consumers/g-zn/offset-metadata/zn/0"))
	var md struct {
		LeaderEpoch     int32  `json:"leader_epoch"`
		Metadata        string `json:"metadata"`
		CommitTimestamp int64  `json:"commit_timestamp"`
	}
	if err != nil || json.Unmarshal(data, &md) != nil || md.LeaderEpoch != 3 || md.Metadata != "meta" ||
		time.Since(time.UnixMilli(md.CommitTimestamp)) > time.Minute {
		t.Fatalf("offset-metadata/zn/0 = %s, %v", data, err)
	}
	if ok, _, _ := z.Exists(e.Path("/consumers/g-zn/offset-metadata/zn/1")); ok {
		t.Fatal("offset-metadata written for a commit without epoch or metadata")
	}
	// A later commit without metadata removes the stale metadata node.
	os = kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "zn", Partition: 0, At: 50, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctxT(t), "g-zn", os); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := z.Exists(e.Path("/consumers/g-zn/offset-metadata/zn/0")); ok {
		t.Fatal("stale offset-metadata kept")
	}

	// Members and owners of a live group.
	rec := newRecorder()
	a := e.startMember("za", "g-live", "zn", rec)
	b := e.startMember("zb", "g-live", "zn", rec)
	dg := waitStable(t, adm, "g-live", "zn", 2, 2)
	want := map[string]string{} // partition → member id
	ids := map[string]bool{}
	for _, m := range dg.Members {
		ids[m.MemberID] = true
		ca, _ := m.Assigned.AsConsumer()
		for _, tp := range ca.Topics {
			for _, p := range tp.Partitions {
				want[itoa(int(p))] = m.MemberID
			}
		}
	}
	waitFor(t, 10*time.Second, "ids and owners mirrored", func() bool {
		kids, _, err := z.Children(e.Path("/consumers/g-live/ids"))
		if err != nil || len(kids) != 2 || !ids[kids[0]] || !ids[kids[1]] {
			return false
		}
		for p, id := range want {
			data, st, err := z.Get(e.Path("/consumers/g-live/owners/zn/" + p))
			if err != nil || string(data) != id || st.EphemeralOwner == 0 {
				return false
			}
		}
		return true
	})
	data, st, err := z.Get(e.Path("/consumers/g-live/ids/" + dg.Members[0].MemberID))
	if err != nil || st.EphemeralOwner == 0 || !strings.Contains(string(data), `"subscription":{"zn":1}`) {
		t.Fatalf("ids node %s: %v", data, err)
	}
	a.stop()
	b.stop()
	waitFor(t, 10*time.Second, "ids and owners removed after the group emptied", func() bool {
		kids, _, _ := z.Children(e.Path("/consumers/g-live/ids"))
		o, _, _ := z.Children(e.Path("/consumers/g-live/owners/zn"))
		return len(kids) == 0 && len(o) == 0
	})
}

// TestOffsetExpiry: offsets of a long-empty group and of a deleted topic
// expire, and the group's znodes go with them.
func TestOffsetExpiry(t *testing.T) {
	e := startBroker(t, func(c *broker.Config) {
		c.Groups.OffsetsRetention = 1500 * time.Millisecond
		c.Groups.OffsetsRetentionCheck = 200 * time.Millisecond
	})
	createTopic(t, e, "exp", 1)
	createTopic(t, e, "doomed", 1)
	adm := e.Admin()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "exp", Partition: 0, At: 1, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctxT(t), "g-exp", os); err != nil {
		t.Fatal(err)
	}
	z := e.ZK()
	waitFor(t, 15*time.Second, "group g-exp expired", func() bool {
		ok, _, _ := z.Exists(e.Path("/consumers/g-exp"))
		return !ok
	})
	offs, err := adm.FetchOffsets(ctxT(t), "g-exp")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("exp", 0); ok && o.At >= 0 {
		t.Fatalf("offset still served after expiry: %+v", o)
	}

	// A deleted topic's offsets go at once (well before retention).
	os = kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "doomed", Partition: 0, At: 5, LeaderEpoch: -1})
	if err := adm.CommitAllOffsets(ctxT(t), "g-doomed", os); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.DeleteTopics(context.Background(), "doomed"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "offsets of deleted topic removed", func() bool {
		ok, _, _ := z.Exists(e.Path("/consumers/g-doomed/offsets/doomed/0"))
		return !ok
	})
}
