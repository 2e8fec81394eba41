package compact

import (
	"testing"
	"time"

	"github.com/zkafka/zkafka/store/segment"
)

// TestAbortedRecordsRemoved: with the log's aborted-transaction index, a
// cleaning leaves an aborted record out of the offset map (the committed
// value it would shadow stays) and removes the aborted records; the ABORT
// marker and its .txnindex entry stay while data of the transaction was
// found, get a delete horizon at the next cleaning, and go after it.
func TestAbortedRecordsRemoved(t *testing.T) {
	l, err := segment.Open(t.TempDir(), segment.Options{SegmentBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const now = int64(1_700_000_000_000)
	a, b := []byte("A"), []byte("B")
	appendSpec(t, l, batchSpec{recs: []rec{{a, []byte("committed-a")}}, ts: now, pid: -1})                                         // 0
	appendSpec(t, l, batchSpec{recs: []rec{{a, []byte("aborted")}, {b, []byte("aborted")}}, ts: now, pid: 7, transactional: true}) // 1-2
	abort := appendSpec(t, l, batchSpec{pid: 7, control: 2, ts: now})                                                              // 3
	if err := l.AppendAbortedTxn(segment.AbortedTxn{ProducerID: 7, FirstOffset: 1, LastOffset: abort, LastStableOffset: abort + 1}); err != nil {
		t.Fatal(err)
	}
	appendSpec(t, l, batchSpec{recs: []rec{{b, []byte("committed-b")}}, ts: now, pid: 8, transactional: true}) // 4
	appendSpec(t, l, batchSpec{pid: 8, control: 1, ts: now})                                                   // 5
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendSpec(t, l, batchSpec{recs: []rec{{[]byte("C"), []byte("c")}}, ts: now, pid: -1})
	clean := func(at int64) {
		t.Helper()
		p := PlanLog(l.ClosedSegments(), l.StartOffset(), -1, time.UnixMilli(at), 0, 0)
		if _, _, err := Clean(l, p, Options{Map: NewOffsetMap(1 << 16), Now: time.UnixMilli(at),
			DeleteRetention: time.Minute, SegmentBytes: 1 << 20}); err != nil {
			t.Fatal(err)
		}
	}
	values := func() map[string]string {
		out := map[string]string{}
		for _, r := range readAll(t, l).recs {
			out[string(r.key)] += string(r.value)
		}
		return out
	}
	hasMarker := func() bool {
		for _, h := range readAll(t, l).batches {
			if h.Control() && h.BaseOffset() == abort {
				return true
			}
		}
		return false
	}
	clean(now)
	if v := values(); v["A"] != "committed-a" || v["B"] != "committed-b" {
		t.Fatalf("after the first cleaning: %q, want the committed values only", v)
	}
	if !hasMarker() || len(l.AbortedTxns(0, 10)) != 1 {
		t.Fatalf("the abort marker (%v) and its index entry (%v) must stay while the cleaning found its data", hasMarker(), l.AbortedTxns(0, 10))
	}
	clean(now) // no data left: the marker gets its delete horizon
	if !hasMarker() {
		t.Fatal("the marker went before its delete horizon")
	}
	clean(now + 2*time.Minute.Milliseconds())
	if hasMarker() || len(l.AbortedTxns(0, 10)) != 0 {
		t.Fatalf("after the horizon: marker %v, index %v; want both gone", hasMarker(), l.AbortedTxns(0, 10))
	}
	if v := values(); v["A"] != "committed-a" || v["B"] != "committed-b" {
		t.Fatalf("after the last cleaning: %q", v)
	}
}
