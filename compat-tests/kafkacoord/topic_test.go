package kafkacoord

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestOffsetsTopic: the first FindCoordinator creates __consumer_offsets
// as Kafka's defaults have it (50 partitions, 3 replicas, compacted),
// Metadata lists it as internal, a produce to it is refused, and a
// regex subscription does not read it.
func TestOffsetsTopic(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, settings(0))
	kc := client(t, cl)
	ctx := ctxT(t)
	if _, _, ok := offsetsLeaders(t, kc, 1); ok {
		t.Fatal("__consumer_offsets exists before any FindCoordinator")
	}
	r, err := findCoordinator(t, kc, 2, "first")
	if err != nil || r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("first FindCoordinator: %v %+v, want COORDINATOR_NOT_AVAILABLE", err, r)
	}
	coordinatorOf(t, kc, "first")

	adm := kadm.NewClient(kc)
	// Every broker's Metadata follows the controller's UpdateMetadata.
	var d kadm.TopicDetail
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		td, err := adm.ListTopicsWithInternal(ctx, "__consumer_offsets")
		if err != nil {
			t.Fatal(err)
		}
		if d = td["__consumer_offsets"]; d.Err == nil && len(d.Partitions) == 50 || time.Now().After(deadline) {
			break
		}
	}
	if d.Err != nil || !d.IsInternal || len(d.Partitions) != 50 {
		t.Fatalf("__consumer_offsets: err %v internal %v partitions %d", d.Err, d.IsInternal, len(d.Partitions))
	}
	for _, p := range d.Partitions {
		if len(p.Replicas) != 3 {
			t.Fatalf("partition %d replicas %v, want 3", p.Partition, p.Replicas)
		}
	}
	if listed, err := adm.ListTopics(ctx); err != nil || listed.Has("__consumer_offsets") {
		t.Fatalf("ListTopics without internal lists it: %v %v", listed.Names(), err)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rc.On("__consumer_offsets", nil); err != nil || !hasConfig(v, "cleanup.policy", "compact") {
		t.Fatalf("configs: %+v %v, want cleanup.policy=compact", v, err)
	}

	// Produce: INVALID_TOPIC_EXCEPTION, as Kafka for a client — once
	// every broker's metadata has the topic (the new client may ask any).
	for id := int32(1); id <= 3; id++ {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if leaders, _, ok := offsetsLeaders(t, kc, id); ok && len(leaders) == 50 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("broker %d's metadata never listed __consumer_offsets", id)
			}
		}
	}
	pc := client(t, cl, kgo.RecordRetries(0), kgo.RequestRetries(0))
	err = pc.ProduceSync(ctx, &kgo.Record{Topic: "__consumer_offsets", Key: []byte("k"), Value: []byte("v")}).FirstErr()
	if !errors.Is(err, kerr.InvalidTopicException) {
		t.Fatalf("produce to __consumer_offsets: %v, want INVALID_TOPIC_EXCEPTION", err)
	}

	// A regex subscription of everything reads the user topic only.
	if r, err := adm.CreateTopic(ctx, 2, 3, nil, "regex-user"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	if err := kc.ProduceSync(ctx, &kgo.Record{Topic: "regex-user", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	rx := client(t, cl, kgo.ConsumeRegex(), kgo.ConsumeTopics(".*"), kgo.ConsumerGroup("regex-group"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for deadline := time.Now().Add(30 * time.Second); got == 0 && time.Now().Before(deadline); {
		fs := rx.PollRecords(ctxT(t), 100)
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic != "regex-user" {
				t.Errorf("regex consumer read %s", r.Topic)
			}
			got++
		})
	}
	if got != 1 {
		t.Fatalf("regex consumer read %d records of regex-user, want 1", got)
	}
}

func hasConfig(cs kadm.ResourceConfig, k, v string) bool {
	for _, c := range cs.Configs {
		if c.Key == k && c.Value != nil && *c.Value == v {
			return true
		}
	}
	return false
}

// TestCoordinatorIsPartitionLeader: FindCoordinator, through every
// broker, names the leader of abs(hash(group)) % 50; a group request to
// another broker answers NOT_COORDINATOR.
func TestCoordinatorIsPartitionLeader(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, settings(0))
	kc := client(t, cl)
	coordinatorOf(t, kc, "warmup")
	var leaders []int32
	waitFor(t, 30*time.Second, "leaders of every offsets partition on every broker", func() bool {
		for id := int32(1); id <= 3; id++ {
			l, internal, ok := offsetsLeaders(t, kc, id)
			if !ok || !internal {
				return false
			}
			for _, x := range l {
				if x < 0 {
					return false
				}
			}
			leaders = l
		}
		return true
	})
	byLeader := map[int32]int{}
	for i := 0; i < 12; i++ {
		group := fmt.Sprintf("group-%d", i)
		want := leaders[partitionFor(group, len(leaders))]
		byLeader[want]++
		for id := int32(1); id <= 3; id++ {
			r, err := findCoordinator(t, kc, id, group)
			if err != nil || r.ErrorCode != 0 || r.NodeID != want {
				t.Fatalf("FindCoordinator %s via %d: %v %+v, want %d", group, id, err, r, want)
			}
		}
		for id := int32(1); id <= 3; id++ {
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Group, hb.MemberID, hb.Generation = group, "nobody", 1
			resp, err := kc.Broker(int(id)).Request(ctxT(t), hb)
			if err != nil {
				t.Fatal(err)
			}
			code := resp.(*kmsg.HeartbeatResponse).ErrorCode
			switch {
			case id == want && code == kerr.NotCoordinator.Code:
				t.Fatalf("%s: its coordinator %d answers NOT_COORDINATOR", group, id)
			case id != want && code != kerr.NotCoordinator.Code:
				t.Fatalf("%s: broker %d (coordinator %d) answers %d, want NOT_COORDINATOR", group, id, want, code)
			}
		}
	}
	if len(byLeader) < 2 {
		t.Fatalf("12 groups all on one coordinator: %v", byLeader)
	}
}
