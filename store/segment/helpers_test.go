package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"
)

// entry is the model of one batch: what the log must give back.
type entry struct {
	base    int64
	count   int32
	ts      int64
	payload []byte
}

// model is the expected content of a log.
type model struct {
	entries []entry
	next    int64
}

func (m *model) append(e entry) {
	e.base = m.next
	m.entries = append(m.entries, e)
	m.next += int64(e.count)
}

// truncate drops entries covering offsets >= off and returns the new end.
func (m *model) truncate(off int64) int64 {
	for i, e := range m.entries {
		if e.base+int64(e.count)-1 >= off {
			m.entries = m.entries[:i]
			m.next = e.base
			return m.next
		}
	}
	return m.next
}

func payloadFor(off int64, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(off*7 + int64(i))
	}
	return p
}

// appendEntry appends a batch with payload derived from the offset.
func appendEntry(t testing.TB, l *Log, m *model, count int32, ts int64, size int) {
	t.Helper()
	p := payloadFor(l.NextOffset(), size)
	b := AppendBatch(nil, p, count, ts)
	off, err := l.Append(b, count, ts)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if m != nil {
		if off != m.next {
			t.Fatalf("Append gave offset %d, want %d", off, m.next)
		}
		m.append(entry{count: count, ts: ts, payload: p})
	}
}

// parseBatches splits bytes into batches and checks each.
func parseBatches(b []byte) ([]entry, error) {
	var es []entry
	for len(b) > 0 {
		if len(b) < HeaderSize {
			return nil, errors.New("short header")
		}
		n := batchSize(b)
		if n > int64(len(b)) || n < HeaderSize {
			return nil, fmt.Errorf("bad size %d", n)
		}
		if !checkCRC(b[:n]) {
			return nil, errors.New("bad crc")
		}
		es = append(es, entry{base: BatchBaseOffset(b), count: batchLastOffsetDelta(b) + 1,
			ts: batchMaxTimestamp(b), payload: bytes.Clone(Payload(b[:n]))})
		b = b[n:]
	}
	return es, nil
}

// checkLog reads the whole log from StartOffset and compares it with the
// model's entries that are not below the start.
func checkLog(t testing.TB, l *Log, m *model) {
	t.Helper()
	if l.NextOffset() != m.next {
		t.Fatalf("NextOffset = %d, want %d", l.NextOffset(), m.next)
	}
	var got []entry
	for off := l.StartOffset(); off < l.NextOffset(); {
		b, err := l.ReadBatches(off, 3000, nil)
		if err != nil {
			t.Fatalf("ReadBatches(%d): %v", off, err)
		}
		es, err := parseBatches(b)
		if err != nil || len(es) == 0 {
			t.Fatalf("ReadBatches(%d): %d batches, %v", off, len(es), err)
		}
		got = append(got, es...)
		last := es[len(es)-1]
		off = last.base + int64(last.count)
		r, err := l.Read(es[0].base, 3000)
		if err != nil || r.NextOffset != off || r.BaseOffset != es[0].base {
			t.Fatalf("Read(%d) = %+v, %v; want NextOffset %d", es[0].base, r, err, off)
		}
		r.Release()
	}
	var want []entry
	for _, e := range m.entries {
		if e.base+int64(e.count) > l.StartOffset() {
			want = append(want, e)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("log has %d batches, model %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.base != w.base || g.count != w.count || g.ts != w.ts || !bytes.Equal(g.payload, w.payload) {
			t.Fatalf("batch %d: got base=%d count=%d ts=%d len=%d, want base=%d count=%d ts=%d len=%d",
				i, g.base, g.count, g.ts, len(g.payload), w.base, w.count, w.ts, len(w.payload))
		}
	}
}

func mustOpen(t testing.TB, dir string, o Options) *Log {
	t.Helper()
	l, err := Open(dir, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// fakeClock is an injectable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }

func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
