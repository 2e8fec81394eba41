package compact

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// cleanerModel is what the log must hold: the latest value of every key
// (nil: the latest is a tombstone), the last batch of each producer, and
// the transactions with their marker.
type cleanerModel struct {
	latest    map[string][]byte
	producers map[int64]ProducerLast
	lastBatch map[int64]int64 // producer -> base offset of its last batch
	txns      []*txn
	seqs      map[int64]int32
	// tombAt is the offset of each key's latest record when it is a
	// tombstone; reached the time of the first cleaning that covered it.
	tombAt   map[string]int64
	reached  map[int64]int64
	appended int64 // bytes appended
}

type txn struct {
	pid        int64
	data       []int64 // offsets of its records
	markerBase int64   // -1 until written
}

func newModel() *cleanerModel {
	return &cleanerModel{latest: map[string][]byte{}, producers: map[int64]ProducerLast{},
		lastBatch: map[int64]int64{}, seqs: map[int64]int32{},
		tombAt: map[string]int64{}, reached: map[int64]int64{}}
}

// randomBatch appends a random batch to l and records it in m.
func (m *cleanerModel) randomBatch(t *testing.T, l *segment.Log, rng *rand.Rand, keys int, now int64, open *txn) *txn {
	codecs := []int{kproto.CodecNone, kproto.CodecGzip, kproto.CodecSnappy, kproto.CodecLZ4, kproto.CodecZstd}
	s := batchSpec{codec: codecs[rng.IntN(len(codecs))], ts: now, pid: -1}
	if open != nil && rng.IntN(3) == 0 {
		s = batchSpec{pid: open.pid, epoch: 0, seq: m.seqs[open.pid], control: 1 + rng.IntN(2), ts: now}
		base := appendSpec(t, l, s)
		open.markerBase = base
		m.lastBatch[open.pid] = base
		// The producer's last entry is a marker: no data offset after it.
		m.producers[open.pid] = ProducerLast{LastDataOffset: m.producers[open.pid].LastDataOffset, Epoch: 0}
		return nil
	}
	pidKind := rng.IntN(4) // 0: idempotent, 1: transactional, else plain
	switch {
	case open != nil:
		s.pid, s.transactional = open.pid, true
	case pidKind == 0:
		s.pid = int64(1 + rng.IntN(3))
	case pidKind == 1:
		s.pid, s.transactional = int64(100+rng.IntN(3)), true
		open = &txn{pid: s.pid, markerBase: -1}
		m.txns = append(m.txns, open)
	}
	if s.pid >= 0 {
		s.seq = m.seqs[s.pid]
	}
	n := 1 + rng.IntN(8)
	for range n {
		k := key(rng.IntN(keys))
		var v []byte
		if rng.IntN(5) != 0 {
			v = []byte{byte(rng.IntN(256)), byte(rng.IntN(256)), 'v'}
		}
		s.recs = append(s.recs, rec{k, v})
	}
	base := appendSpec(t, l, s)
	m.appended += int64(len(buildBatch(t, s)))
	for i, r := range s.recs {
		m.latest[string(r.key)] = r.value
		delete(m.tombAt, string(r.key))
		if r.value == nil {
			m.tombAt[string(r.key)] = base + int64(i)
		}
		if open != nil {
			open.data = append(open.data, base+int64(i))
		}
	}
	if s.pid >= 0 {
		m.seqs[s.pid] += int32(n)
		m.producers[s.pid] = ProducerLast{LastDataOffset: base + int64(n) - 1}
		m.lastBatch[s.pid] = base
	}
	return open
}

// check compares a full read of l with the model, after a cleaning that
// covered everything below end.
func (m *cleanerModel) check(t *testing.T, l *segment.Log, end, now, retention int64) readBack {
	t.Helper()
	rb := readAll(t, l)
	for k, off := range m.tombAt {
		at, ok := m.reached[off]
		if !ok && off < end {
			m.reached[off], at, ok = now, now, true
		}
		if ok && now >= at+retention {
			continue
		}
		found := false
		for _, r := range rb.recs {
			found = found || (r.off == off && r.value == nil && string(r.key) == k)
		}
		if !found {
			t.Fatalf("tombstone of %s at %d dropped before delete.retention.ms after the cleaning that reached it", k, off)
		}
	}
	seen := map[string]int{}
	lastVal := map[string][]byte{}
	present := map[int64]bool{}
	for _, r := range rb.recs {
		if r.off < end {
			seen[string(r.key)]++
			if seen[string(r.key)] > 1 && r.key != nil {
				t.Fatalf("key %s twice below the cleaned end %d (offset %d)", r.key, end, r.off)
			}
		}
		lastVal[string(r.key)] = r.value
		present[r.off] = true
	}
	for k, v := range m.latest {
		got, ok := lastVal[k]
		switch {
		case v != nil && (!ok || !bytes.Equal(got, v)):
			t.Fatalf("key %s: read %q (present %v), want the latest %q", k, got, ok, v)
		case v == nil && ok && got != nil:
			t.Fatalf("key %s: read %q, want its tombstone or nothing", k, got)
		}
	}
	batches := map[int64]kproto.Batch{}
	for _, b := range rb.batches {
		batches[b.BaseOffset()] = b
	}
	for pid, base := range m.lastBatch {
		b, ok := batches[base]
		if !ok || b.ProducerID() != pid {
			t.Fatalf("producer %d: its last batch at %d is gone", pid, base)
		}
	}
	for _, x := range m.txns {
		if x.markerBase < 0 {
			continue
		}
		for _, o := range x.data {
			if present[o] {
				if _, ok := batches[x.markerBase]; !ok {
					t.Fatalf("txn of producer %d: data at %d kept but its marker at %d gone", x.pid, o, x.markerBase)
				}
				break
			}
		}
	}
	return rb
}

// TestCleanerModel runs random appends, rolls and cleanings (random
// segment sizes, codecs, tombstones, idempotent and transactional batches
// with markers, offset maps too small for the dirty part) and checks every
// cleaning against the model.
func TestCleanerModel(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 17))
		segBytes := int64(300 + rng.IntN(4000))
		l, err := segment.Open(t.TempDir(), segment.Options{SegmentBytes: segBytes, IndexIntervalBytes: 1 + rng.IntN(512)})
		if err != nil {
			t.Fatal(err)
		}
		m := newModel()
		keys := 5 + rng.IntN(60)
		now := epoch.UnixMilli()
		retention := 10 * time.Second
		checkpoint := int64(-1)
		var open *txn
		mapSize := []int{slotSize * 16, slotSize * 64, 1 << 20}[rng.IntN(3)]
		om := NewOffsetMap(mapSize)
		for step := range 60 {
			for range rng.IntN(30) {
				open = m.randomBatch(t, l, rng, keys, now, open)
			}
			if open != nil && step%7 == 6 {
				base := appendSpec(t, l, batchSpec{pid: open.pid, control: 1, ts: now})
				open.markerBase = base
				m.lastBatch[open.pid] = base
				open = nil
			}
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
			now += int64(rng.IntN(8000))
			p := PlanLog(l.ClosedSegments(), l.StartOffset(), checkpoint, time.UnixMilli(now), 0, 0)
			for p.DirtyBytes > 0 {
				next, _, err := Clean(l, p, Options{Map: om, Now: time.UnixMilli(now), DeleteRetention: retention,
					SegmentBytes: segBytes, Producers: m.producers})
				if err != nil {
					t.Fatalf("seed %d step %d: %v", seed, step, err)
				}
				checkpoint = next
				p = PlanLog(l.ClosedSegments(), l.StartOffset(), checkpoint, time.UnixMilli(now), 0, 0)
			}
			m.check(t, l, checkpoint, now, retention.Milliseconds())
		}
		// Past every horizon, two more cleanings drop every tombstone
		// outside a producer's last batch.
		for range 2 {
			now += 2 * retention.Milliseconds()
			appendSpec(t, l, batchSpec{recs: []rec{{key(0), []byte("x")}}, ts: now, pid: -1})
			m.latest[string(key(0))] = []byte("x")
			l.Roll()
			p := PlanLog(l.ClosedSegments(), l.StartOffset(), checkpoint, time.UnixMilli(now), 0, 0)
			for p.DirtyBytes > 0 {
				checkpoint, _, err = Clean(l, p, Options{Map: om, Now: time.UnixMilli(now), DeleteRetention: retention,
					SegmentBytes: segBytes, Producers: m.producers})
				if err != nil {
					t.Fatal(err)
				}
				p = PlanLog(l.ClosedSegments(), l.StartOffset(), checkpoint, time.UnixMilli(now), 0, 0)
			}
		}
		rb := m.check(t, l, checkpoint, now, retention.Milliseconds())
		lastOf := map[int64]bool{}
		for _, base := range m.lastBatch {
			lastOf[base] = true
		}
		for _, r := range rb.recs {
			if r.value == nil && r.key != nil && !inLastBatch(rb, r.off, lastOf) {
				t.Fatalf("seed %d: tombstone of %s at %d outlived delete.retention.ms", seed, r.key, r.off)
			}
		}
		if l.Size() >= m.appended/2 {
			t.Fatalf("seed %d: the log holds %d bytes of the %d appended: cleaning did not shrink it", seed, l.Size(), m.appended)
		}
		l.Close()
	}
}

// inLastBatch reports whether offset off is in a batch listed in last.
func inLastBatch(rb readBack, off int64, last map[int64]bool) bool {
	for _, b := range rb.batches {
		if off >= b.BaseOffset() && off <= b.LastOffset() {
			return last[b.BaseOffset()]
		}
	}
	return false
}
