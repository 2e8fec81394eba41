package kafkacoord

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// reader decodes Kafka's internal record schemas (big-endian, int16
// length strings, -1 for null) by their spec, written here from the
// message JSON files of Kafka 3.7 (OffsetCommitKey, OffsetCommitValue,
// GroupMetadataKey, GroupMetadataValue).
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = errors.New("short")
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *reader) i16() int16 { return int16(binary.BigEndian.Uint16(r.take(2))) }
func (r *reader) i32() int32 { return int32(binary.BigEndian.Uint32(r.take(4))) }
func (r *reader) i64() int64 { return int64(binary.BigEndian.Uint64(r.take(8))) }
func (r *reader) str() string {
	n := r.i16()
	if n < 0 {
		return "<null>"
	}
	return string(r.take(int(n)))
}
func (r *reader) bytes() []byte { return r.take(int(r.i32())) }

type commitRecord struct {
	group, topic        string
	partition           int32
	version             int16
	offset              int64
	leaderEpoch         int32
	metadata            string
	commitTime          int64
	expected, remaining int
}

type groupRecord struct {
	group, protocolType, protocol, leader string
	generation                            int32
	members                               []string
}

// decode reads one __consumer_offsets record.
func decode(key, value []byte) (any, error) {
	k := &reader{b: key}
	switch v := k.i16(); v {
	case 0, 1:
		c := commitRecord{group: k.str(), topic: k.str(), partition: k.i32()}
		if k.err != nil || len(k.b) != 0 || v != 1 {
			return nil, fmt.Errorf("offset commit key v%d: %v, %d bytes left", v, k.err, len(k.b))
		}
		r := &reader{b: value}
		if c.version = r.i16(); c.version != 3 {
			return nil, fmt.Errorf("offset commit value v%d, want v3", c.version)
		}
		c.offset, c.leaderEpoch, c.metadata, c.commitTime = r.i64(), r.i32(), r.str(), r.i64()
		if r.err != nil || len(r.b) != 0 {
			return nil, fmt.Errorf("offset commit value: %v, %d bytes left", r.err, len(r.b))
		}
		return c, nil
	case 2:
		g := groupRecord{group: k.str()}
		r := &reader{b: value}
		if v := r.i16(); v != 3 {
			return nil, fmt.Errorf("group metadata value v%d, want v3", v)
		}
		g.protocolType, g.generation, g.protocol, g.leader = r.str(), r.i32(), r.str(), r.str()
		r.i64() // current_state_timestamp
		n := r.i32()
		for i := int32(0); i < n && r.err == nil; i++ {
			id := r.str()
			r.str()   // group_instance_id
			r.str()   // client_id
			r.str()   // client_host
			r.i32()   // rebalance_timeout
			r.i32()   // session_timeout
			r.bytes() // subscription
			r.bytes() // assignment
			g.members = append(g.members, id)
		}
		if r.err != nil || len(r.b) != 0 {
			return nil, fmt.Errorf("group metadata value: %v, %d bytes left", r.err, len(r.b))
		}
		return g, nil
	default:
		return nil, fmt.Errorf("key version %d", v)
	}
}

// TestOffsetsTopicRecords: a group's commits and rebalances are in its
// partition of __consumer_offsets in Kafka's formats, read back with a
// kgo consumer.
func TestOffsetsTopicRecords(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3, settings(0))
	kc := client(t, cl)
	ctx := ctxT(t)
	adm := kadm.NewClient(kc)
	if r, err := adm.CreateTopic(ctx, 2, 3, nil, "rec-topic"); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	for i := 0; i < 10; i++ {
		if err := kc.ProduceSync(ctx, &kgo.Record{Topic: "rec-topic", Key: []byte{byte(i)}, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	const group = "rec-group"
	m := client(t, cl, kgo.ConsumerGroup(group), kgo.ConsumeTopics("rec-topic"), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ClientID("rec-member"))
	n := 0
	for deadline := time.Now().Add(30 * time.Second); n < 10 && time.Now().Before(deadline); {
		fs := m.PollFetches(ctx)
		n += fs.NumRecords()
	}
	if n != 10 {
		t.Fatalf("read %d records, want 10", n)
	}
	if err := m.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	memberID, gen := m.GroupMetadata()

	leaders, _, _ := offsetsLeaders(t, kc, 1)
	p := partitionFor(group, len(leaders))
	rd := client(t, cl, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"__consumer_offsets": {p: kgo.NewOffset().AtStart()}}))
	commits := map[int32]commitRecord{}
	var last *groupRecord
	for deadline := time.Now().Add(30 * time.Second); (len(commits) < 2 || last == nil) && time.Now().Before(deadline); {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := rd.PollRecords(pctx, 100)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				return
			}
			rec, err := decode(r.Key, r.Value)
			if err != nil {
				t.Fatalf("record at %d: %v", r.Offset, err)
			}
			switch rec := rec.(type) {
			case commitRecord:
				if rec.group != group || rec.topic != "rec-topic" {
					t.Fatalf("commit record of %s %s in partition %d", rec.group, rec.topic, p)
				}
				commits[rec.partition] = rec
			case groupRecord:
				if rec.group != group {
					t.Fatalf("group record of %s in partition %d", rec.group, p)
				}
				last = &rec
			}
		})
	}
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for part := int32(0); part < 2; part++ {
		c, ok := commits[part]
		want, _ := offs.Lookup("rec-topic", part)
		if !ok || c.offset != want.At || c.offset <= 0 || c.commitTime <= 0 || c.leaderEpoch != want.LeaderEpoch {
			t.Fatalf("commit record of rec-topic-%d: %+v (%v), want %+v", part, c, ok, want)
		}
	}
	if last == nil || last.generation != gen || last.protocolType != "consumer" || last.leader != memberID ||
		len(last.members) != 1 || last.members[0] != memberID {
		t.Fatalf("group metadata record %+v, want generation %d, member and leader %s", last, gen, memberID)
	}

	// Deleting the group writes tombstones (null values) for its offset
	// keys and its group metadata key, as Kafka, for compaction to drop.
	m.Close()
	waitFor(t, 30*time.Second, "the group to be deleted", func() bool {
		r, err := adm.DeleteGroup(ctx, group)
		return err == nil && r.Err == nil
	})
	tombs := map[string]bool{}
	for deadline := time.Now().Add(30 * time.Second); len(tombs) < 3 && time.Now().Before(deadline); {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := rd.PollRecords(pctx, 100)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				tombs[fmt.Sprintf("%x", r.Key)] = true
			}
		})
	}
	if len(tombs) != 3 {
		t.Fatalf("%d tombstones after DeleteGroups, want 3 (two offsets, the group)", len(tombs))
	}
}
