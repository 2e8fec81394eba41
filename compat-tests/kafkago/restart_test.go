package kafkago

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestRestartKeepsDataAndOffsets(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "durable", 2)
	c := e.Client(kgo.DefaultProduceTopic("durable"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < 50; i++ {
		produceSync(t, c, &kgo.Record{Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))})
	}
	e.Restart()
	if hw := listOffset(t, e, "durable", 1, -1); hw != 25 {
		t.Fatalf("partition 1 high watermark after restart: %d", hw)
	}
	c = e.Client(kgo.DefaultProduceTopic("durable"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceSync(t, c, &kgo.Record{Partition: 0, Value: []byte("after")})
	got := consumeN(t, e, "durable", 51)
	last := map[int32]*kgo.Record{}
	for _, r := range got {
		last[r.Partition] = r
	}
	if r := last[0]; r.Offset != 25 || string(r.Value) != "after" {
		t.Fatalf("record after restart: offset %d value %q", r.Offset, r.Value)
	}
}

// TestTornTailRecovered shuts the broker down, tears the last batch of the
// active segment (as a crash mid-write would), restarts, and expects
// every batch before the tear to be served and appends to continue.
func TestTornTailRecovered(t *testing.T) {
	e := startBroker(t)
	createTopic(t, e, "torn", 1)
	c := dialRaw(t, e.Addr)
	for i := 0; i < 10; i++ {
		if r := produceRaw(c, "torn", 0, buildBatch(-1, -1, -1, nowMs(), fmt.Sprint(i), "x")); r.ErrorCode != 0 {
			t.Fatal(r.ErrorCode)
		}
	}
	e.Stop()
	seg := filepath.Join(e.Config.LogDirs[0], "torn-0", "00000000000000000000.log")
	fi, err := os.Stat(seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(seg, fi.Size()-7); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("garbage after a torn write"))
	f.Close()
	e.Start()
	if hw := listOffset(t, e, "torn", 0, -1); hw != 18 {
		t.Fatalf("high watermark after recovery %d, want 18 (9 whole batches)", hw)
	}
	got := consumeN(t, e, "torn", 18)
	for i, r := range got {
		if r.Offset != int64(i) || (i%2 == 0 && string(r.Value) != fmt.Sprint(i/2)) {
			t.Fatalf("record %d: offset %d value %q", i, r.Offset, r.Value)
		}
	}
	c = dialRaw(t, e.Addr)
	if r := produceRaw(c, "torn", 0, buildBatch(-1, -1, -1, nowMs(), "new")); r.ErrorCode != 0 || r.BaseOffset != 18 {
		t.Fatalf("append after recovery: %+v", r)
	}
}
