package kafkago

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestProducerSnapshotsAcrossRestarts: an idempotent producer's batches
// over a log of many segments (segment.bytes 1024) leave Kafka's
// {offset:020d}.snapshot files at the rolls and at the clean shutdown;
// after a restart a retry of the producer's last batch is still answered
// with its first offset and not appended, and the next sequence goes on.
// A corrupt snapshot is ignored with a warning (the state is rebuilt
// from an older snapshot and the log) and deduplication still holds.
func TestProducerSnapshotsAcrossRestarts(t *testing.T) {
	e := startBroker(t)
	seg := "1024"
	if _, err := e.Admin().CreateTopic(ctxT(t), 1, 1, map[string]*string{"segment.bytes": &seg}, "snaps"); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, e.Addr)
	pid, epoch := initProducerID(t, c)
	const n = 120
	var last int64
	for seq := int32(0); seq < n; seq++ {
		r := produceRaw(c, "snaps", 0, buildBatch(pid, epoch, seq, nowMs(), strings.Repeat("v", 100)))
		if r.ErrorCode != 0 {
			t.Fatalf("batch %d: error %d", seq, r.ErrorCode)
		}
		last = r.BaseOffset
	}
	dir := filepath.Join(e.Config.LogDirs[0], "snaps-0")
	retry := func(what string) {
		t.Helper()
		c := dialRaw(t, e.Addr)
		r := produceRaw(c, "snaps", 0, buildBatch(pid, epoch, n-1, nowMs(), strings.Repeat("v", 100)))
		if r.ErrorCode != 0 || r.BaseOffset != last {
			t.Fatalf("%s: retry of the last batch: error %d offset %d, want the original %d", what, r.ErrorCode, r.BaseOffset, last)
		}
		if hw := listOffset(t, e, "snaps", 0, -1); hw != n {
			t.Fatalf("%s: log end %d after a retry, want %d", what, hw, n)
		}
	}
	e.Restart()
	logs, snaps := files(t, dir, ".log"), files(t, dir, ".snapshot")
	if len(logs) < 10 || len(snaps) < 10 {
		t.Fatalf("%d segments and %d snapshots; want many of both (%v)", len(logs), len(snaps), snaps)
	}
	if want := "00000000000000000120.snapshot"; snaps[len(snaps)-1] != want {
		t.Fatalf("latest snapshot %s, want %s (the clean shutdown's, at the log end)", snaps[len(snaps)-1], want)
	}
	retry("after a restart")

	e.Stop()
	latest := filepath.Join(dir, "00000000000000000120.snapshot")
	data, err := os.ReadFile(latest)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(latest, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.Start()
	if e.Logs.Count("WARN producer state snapshot ignored") == 0 {
		t.Fatal("no warning about the corrupt snapshot")
	}
	retry("after a restart with a corrupt snapshot")
	c = dialRaw(t, e.Addr)
	if r := produceRaw(c, "snaps", 0, buildBatch(pid, epoch, n, nowMs(), "next")); r.ErrorCode != 0 || r.BaseOffset != n {
		t.Fatalf("next sequence: error %d offset %d, want %d", r.ErrorCode, r.BaseOffset, n)
	}
}

// files is dir's file names ending in ext, sorted.
func files(t *testing.T, dir, ext string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// initProducerID asks c's broker for an idempotent producer id.
func initProducerID(t *testing.T, c *rawConn) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = 4
	r := c.roundTrip(req).(*kmsg.InitProducerIDResponse)
	if r.ErrorCode != 0 || r.ProducerID < 0 {
		t.Fatalf("InitProducerId: %+v", r)
	}
	return r.ProducerID, r.ProducerEpoch
}
