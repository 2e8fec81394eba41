package kafkago

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestMinInsyncReplicas: an acks=all produce to a partition whose ISR is
// smaller than its min.insync.replicas is NOT_ENOUGH_REPLICAS and appends
// nothing; with a large enough ISR it is appended.
func TestMinInsyncReplicas(t *testing.T) {
	e := startBroker(t)
	two := "2"
	if r, err := e.Admin().CreateTopic(ctxT(t), 1, 1, map[string]*string{"min.insync.replicas": &two}, "strict"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	createTopic(t, e, "lax", 1)
	c := dialRaw(t, e.Addr)
	r := produceRaw(c, "strict", 0, buildBatch(-1, -1, -1, nowMs(), "a"))
	if r.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all, ISR 1 < min.insync.replicas 2: error %d, want NOT_ENOUGH_REPLICAS", r.ErrorCode)
	}
	if off := listOffset(t, e, "strict", 0, -1); off != 0 {
		t.Fatalf("refused produce appended: end offset %d", off)
	}
	if r := produceRaw(c, "lax", 0, buildBatch(-1, -1, -1, nowMs(), "a")); r.ErrorCode != 0 || r.BaseOffset != 0 {
		t.Fatalf("acks=all, ISR 1 = min.insync.replicas 1: %+v", r)
	}
}
