package kafkago

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func fetchReq(topic string, partition int32, offset int64, maxWait time.Duration) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID = 12, -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = int32(maxWait/time.Millisecond), 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// TestFetchLongPollWokenByProduce parks a fetch with max_wait 5 s and
// checks that a produce wakes it at once rather than at the timeout.
func TestFetchLongPollWokenByProduce(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "poll", 1)
	fc := dialRaw(t, e.Addr)
	pc := dialRaw(t, e.Addr)
	for round := 0; round < 3; round++ {
		corr := fc.send(fetchReq("poll", 0, int64(round), 5*time.Second))
		time.Sleep(100 * time.Millisecond) // let the fetch park
		start := time.Now()
		if r := produceRaw(pc, "poll", 0, buildBatch(-1, -1, -1, nowMs(), "wake")); r.ErrorCode != 0 {
			t.Fatal(r.ErrorCode)
		}
		body, err := fc.readFrame(10 * time.Second)
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		if got := int32(body[0])<<24 | int32(body[1])<<16 | int32(body[2])<<8 | int32(body[3]); got != corr {
			t.Fatalf("correlation %d, want %d", got, corr)
		}
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 12
		if err := resp.ReadFrom(body[5:]); err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.HighWatermark != int64(round+1) {
			t.Fatalf("fetch response: %+v", p)
		}
		// Woken, not timed out: bound generously for a loaded machine.
		if took > 500*time.Millisecond {
			t.Fatalf("fetch answered %v after the produce; it was not woken", took)
		}
		t.Logf("round %d: fetch answered %v after the produce", round, took)
	}
	// Nothing produced: the fetch waits max_wait.
	start := time.Now()
	resp := fc.roundTrip(fetchReq("poll", 0, 3, 300*time.Millisecond)).(*kmsg.FetchResponse)
	if took := time.Since(start); took < 250*time.Millisecond || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("empty fetch returned after %v", took)
	}
}

func TestFetchOffsetOutOfRange(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "oor", 1)
	produceSync(t, e.Client(), recordTo("oor", 0, "x"))
	c := dialRaw(t, e.Addr)
	for _, off := range []int64{-5, 2, 100} {
		resp := c.roundTrip(fetchReq("oor", 0, off, 0)).(*kmsg.FetchResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.OffsetOutOfRange.Code {
			t.Errorf("offset %d: error %d, want OFFSET_OUT_OF_RANGE", off, code)
		}
	}
	resp := c.roundTrip(fetchReq("oor", 0, 1, 0)).(*kmsg.FetchResponse)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 1 {
		t.Errorf("fetch at the end: %+v", p)
	}
}

// TestManyPartitions produces to and consumes from 32 partitions.
func TestManyPartitions(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "wide", 32)
	p := e.Client(kgo.DefaultProduceTopic("wide"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for i := 0; i < 32*20; i++ {
		recs = append(recs, &kgo.Record{Partition: int32(i % 32), Value: []byte(fmt.Sprint(i))})
	}
	produceSync(t, p, recs...)
	got := consumeN(t, e, "wide", len(recs))
	per := map[int32]int64{}
	for _, r := range got {
		if r.Offset != per[r.Partition] {
			t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, per[r.Partition])
		}
		per[r.Partition]++
	}
	if len(per) != 32 {
		t.Fatalf("%d partitions had records", len(per))
	}
}

// TestConcurrentProducersOnePartition checks that concurrent producers'
// appends to one partition are serialized with dense offsets.
func TestConcurrentProducersOnePartition(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "busy", 1)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := e.Client(kgo.DefaultProduceTopic("busy"))
			for i := 0; i < 50; i++ {
				if err := c.ProduceSync(ctxT(t), &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got := consumeN(t, e, "busy", 200)
	for i, r := range got {
		if r.Offset != int64(i) {
			t.Fatalf("record %d has offset %d", i, r.Offset)
		}
	}
}
