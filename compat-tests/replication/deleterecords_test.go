package replication

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestDeleteRecordsReplicated: kadm.DeleteRecords on an RF 3 partition
// answers the low watermark once every replica moved its log start (the
// followers learn it from their fetches); a consumer below it gets
// OFFSET_OUT_OF_RANGE; an offset above the high watermark is
// OFFSET_OUT_OF_RANGE, a compact-only topic POLICY_VIOLATION; the new
// start survives the leader's failover, and every replica's log starts
// there on disk.
func TestDeleteRecordsReplicated(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, fastReplication(10*time.Second))
	createTopic(t, cl, "dr", 1, 3, nil)
	compact := "compact"
	createTopic(t, cl, "dr-compact", 1, 3, map[string]*string{"cleanup.policy": &compact})
	z := cl.Brokers[0].ZK()
	waitState(t, cl, z, "dr", 0, "all in the ISR", isrIs(1, 2, 3))
	ctx := ctxT(t)
	p := client(t, cl, kgo.DefaultProduceTopic("dr"), kgo.RequiredAcks(kgo.AllISRAcks()))
	for i := range 100 {
		if err := p.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(client(t, cl))
	del := func(topic string, off int64) kadm.DeleteRecordsResponse {
		t.Helper()
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: topic, Partition: 0, At: off})
		rs, err := adm.DeleteRecords(ctx, os)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := rs.Lookup(topic, 0)
		return r
	}
	if r := del("dr", 40); r.Err != nil || r.LowWatermark != 40 {
		t.Fatalf("delete records before 40: %+v", r)
	}
	if r := del("dr", 30); r.Err != nil || r.LowWatermark != 40 {
		t.Fatalf("delete records before 30 after 40: %+v, want low watermark 40", r)
	}
	if r := del("dr", 101); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Fatalf("delete records above the high watermark: %+v", r)
	}
	if r := del("dr-compact", 0); !errors.Is(r.Err, kerr.PolicyViolation) {
		t.Fatalf("delete records on a compact-only topic: %+v", r)
	}
	if got := listStart(t, cl, "dr"); got != 40 {
		t.Fatalf("log start %d after deleting records, want 40", got)
	}
	leader := leaderOf(t, cl, "dr", 0)
	if code := fetchCode(t, cl, leader, "dr", 10); code != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch at 10 below the log start: code %d, want OFFSET_OUT_OF_RANGE", code)
	}
	if code := fetchCode(t, cl, leader, "dr", 40); code != 0 {
		t.Fatalf("fetch at the log start: code %d", code)
	}
	cl.Broker(leader).Stop()
	waitState(t, cl, z, "dr", 0, "a new leader", func(s partitionState) bool { return s.Leader >= 0 && s.Leader != leader })
	adm = kadm.NewClient(client(t, cl))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "dr", Partition: 0, At: -1})
		rs, err := adm.DeleteRecords(ctx, os)
		r, _ := rs.Lookup("dr", 0)
		if err == nil && r.Err == nil {
			if r.LowWatermark != 100 {
				t.Fatalf("delete records to the high watermark on the new leader: %+v, want 100", r)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delete records on the new leader: %v %+v", err, r)
		}
	}
	for _, e := range cl.Brokers {
		e.Stop()
	}
	for id := int32(1); id <= 3; id++ {
		want := int64(100)
		if id == leader {
			want = 40 // stopped before the second deletion
		}
		if start, _ := logBytes(t, cl.Broker(id), "dr", 0); start != want {
			t.Errorf("broker %d: log starts at %d on disk, want %d", id, start, want)
		}
	}
}

// fetchCode is the partition error of a consumer Fetch at offset sent to
// broker id.
func fetchCode(t *testing.T, cl *kafkaenv.Cluster, id int32, topic string, offset int64) int16 {
	t.Helper()
	c := client(t, cl)
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes, req.MaxWaitMillis = -1, 1<<20, 10
	rt := kmsg.NewFetchRequestTopic()
	td, err := kadm.NewClient(c).ListTopics(ctxT(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	rt.Topic, rt.TopicID = topic, td[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctxT(t), c.Broker(int(id)))
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch: %v %+v", err, resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}
