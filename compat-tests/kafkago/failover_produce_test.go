package kafkago

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestProducerRidesOutLeaderRestart: an idempotent acks=all franz-go
// producer writes numbered records to one partition while its leader
// stops and starts again (the controller takes the partition offline,
// then gives it back at a newer epoch). The producer moves on by itself,
// and every acknowledged record is in the log exactly once, in order.
func TestProducerRidesOutLeaderRestart(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 2)
	ctx := ctxT(t)
	adm := kadm.NewClient(cl.Broker(1).Client(kgo.SeedBrokers(cl.Seeds()...)))
	if r, err := adm.CreateTopic(ctx, 1, 2, nil, "r"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	var leader int32 = -1
	for deadline := time.Now().Add(20 * time.Second); leader < 0; time.Sleep(20 * time.Millisecond) {
		if td, err := adm.ListTopics(ctx, "r"); err == nil && len(td["r"].Partitions) == 1 {
			leader = td["r"].Partitions[0].Leader
		}
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
	}
	p := cl.Broker(1).Client(kgo.SeedBrokers(cl.Seeds()...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DefaultProduceTopic("r"), kgo.RecordDeliveryTimeout(60*time.Second))
	var acked kafkaenv.Acked
	pctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; pctx.Err() == nil; i++ {
			if err := p.ProduceSync(pctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err == nil {
				acked.Add(i)
			}
		}
	}()
	acked.WaitFor(t, 50, 30*time.Second)
	cl.Broker(leader).Stop()
	cl.Broker(leader).Start()
	before := acked.Len()
	acked.WaitFor(t, before+50, 30*time.Second)
	stop()
	<-done

	c := cl.Broker(1).Client(kgo.SeedBrokers(cl.Seeds()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"r": {0: kgo.NewOffset().AtStart()}}))
	hw, err := adm.ListEndOffsets(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	end := hw["r"][0].Offset
	var log []int
	cctx := kafkaenv.Context(t, 20*time.Second)
	for int64(len(log)) < end && cctx.Err() == nil {
		c.PollFetches(cctx).EachRecord(func(r *kgo.Record) {
			n, _ := strconv.Atoi(string(r.Value))
			log = append(log, n)
		})
	}
	seen := map[int]int{}
	for i, n := range log {
		if i > 0 && n <= log[i-1] {
			t.Fatalf("log out of order at offset %d: %d after %d", i, n, log[i-1])
		}
		seen[n]++
	}
	lost, dup := 0, 0
	for _, n := range acked.List() {
		switch seen[n] {
		case 0:
			lost++
		case 1:
		default:
			dup++
		}
	}
	t.Logf("leader %d restarted: acknowledged %d, in log %d, lost %d, duplicated %d", leader, acked.Len(), len(log), lost, dup)
	if lost != 0 || dup != 0 {
		t.Fatalf("lost %d, duplicated %d acknowledged records", lost, dup)
	}
}
