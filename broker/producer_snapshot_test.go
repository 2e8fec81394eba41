package broker

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// idemBatch is one record of producer pid at sequence seq.
func idemBatch(pid int64, seq int32) kproto.Batch {
	recs := kproto.AppendRecord(nil, 0, 0, nil, bytes.Repeat([]byte("v"), 100), 0, nil)
	return kproto.Batch(kproto.AppendBatch(nil, kproto.BatchHeader{ProducerID: pid, ProducerEpoch: 0, BaseSequence: seq,
		NumRecords: 1, MaxTimestamp: 1700000000000 + int64(seq), FirstTimestamp: 1700000000000 + int64(seq)}, recs))
}

// TestProducerSnapshotRoundTrip: Kafka's snapshot layout (version 1, a
// CRC-32C of the entries, one 46-byte entry per producer's last batch)
// decodes to what was encoded; a flipped bit or a short file is refused.
func TestProducerSnapshotRoundTrip(t *testing.T) {
	in := map[int64]*producerState{7: {epoch: 2}, 9: {epoch: 0}}
	in[7].push(producerBatch{firstSeq: 10, lastSeq: 14, firstOffset: 100, maxTimestamp: 55})
	in[9].push(producerBatch{firstSeq: 0, lastSeq: 0, firstOffset: 3, maxTimestamp: 66})
	b := encodeProducerSnapshot(in)
	if len(b) != snapshotHeader+4+2*snapshotEntrySize || b[0] != 0 || b[1] != 1 {
		t.Fatalf("snapshot of %d bytes, version %x", len(b), b[:2])
	}
	out, err := decodeProducerSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	for pid, st := range in {
		got := out[pid]
		if got == nil || got.epoch != st.epoch || *got.last() != *st.last() {
			t.Fatalf("producer %d: %+v, want %+v", pid, got, st)
		}
	}
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 0x10
		if _, err := decodeProducerSnapshot(bad); !errors.Is(err, errBadSnapshot) {
			t.Fatalf("byte %d flipped: %v, want refused", i, err)
		}
	}
	if _, err := decodeProducerSnapshot(b[:len(b)-1]); !errors.Is(err, errBadSnapshot) {
		t.Fatal("a short snapshot decoded")
	}
}

// TestOpenReadsOnlyTheTail: a log of many segments written by one
// idempotent producer. Reopened after a clean close, the partition reads
// no batch header (the close's snapshot is at the log end); without that
// snapshot (a crash), only the headers after the last roll's; without any
// snapshot, every header. Each way a retry of the last batch is
// recognised. Truncation deletes the snapshots above the cut.
func TestOpenReadsOnlyTheTail(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig(dir)
	tc := effectiveConfig(&cfg, map[string]string{"segment.bytes": "1024"})
	pdir := partitionDir(dir, "t", 0)
	open := func() *partition {
		t.Helper()
		p, err := openReplica(pdir, "t", 0, [16]byte{1}, 0, tc, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.applyState(partState{leader: 0, isr: []int32{0}, replicas: []int32{0}}, time.Now()); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := open()
	const n = 100
	for seq := int32(0); seq < n; seq++ {
		if res := p.appendBatch(idemBatch(42, seq), time.Now()); res.code != kproto.CodeNone {
			t.Fatal(res.code)
		}
	}
	if err := p.close(); err != nil {
		t.Fatal(err)
	}
	headers := func(p *partition) int {
		t.Helper()
		p.mu.Lock()
		defer p.mu.Unlock()
		clear(p.mu.producers)
		k, err := p.loadProducers()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	dedups := func(p *partition, what string) {
		t.Helper()
		if res := p.appendBatch(idemBatch(42, n-1), time.Now()); res.code != kproto.CodeNone || res.baseOffset != n-1 {
			t.Fatalf("%s: retry of the last batch: %+v, want offset %d", what, res, n-1)
		}
	}
	snaps := snapshotOffsets(pdir)
	if len(snaps) < 10 || snaps[len(snaps)-1] != n {
		t.Fatalf("snapshots at %v: want one per roll and one at the log end %d", snaps, n)
	}
	p = open()
	if k := headers(p); k != 0 {
		t.Fatalf("after a clean close: %d headers read, want 0", k)
	}
	dedups(p, "clean close")
	os.Remove(snapshotPath(pdir, n))
	roll := snaps[len(snaps)-2]
	if k := headers(p); k != int(n-roll) {
		t.Fatalf("from the last roll's snapshot (%d): %d headers read, want %d", roll, k, n-roll)
	}
	dedups(p, "roll snapshot")
	for _, off := range snapshotOffsets(pdir) {
		os.Remove(snapshotPath(pdir, off))
	}
	if k := headers(p); k != n {
		t.Fatalf("without snapshots: %d headers read, want every one (%d)", k, n)
	}
	dedups(p, "no snapshot")

	// Truncation (a follower's) removes the snapshots above the new end.
	p.mu.Lock()
	if err := p.writeProducerSnapshotLocked(n); err != nil {
		t.Fatal(err)
	}
	p.mu.Unlock()
	p.mu.Lock()
	_, err := p.log.Truncate(50)
	if err == nil {
		err = p.afterTruncateLocked()
	}
	p.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range snapshotOffsets(pdir) {
		if off > 50 {
			t.Fatalf("snapshot at %d left above the truncation at 50", off)
		}
	}
	if res := p.appendBatch(idemBatch(42, 50), time.Now()); res.code != kproto.CodeNone || res.baseOffset != 50 {
		t.Fatalf("after truncation to 50 the producer continues at sequence 50: %+v", res)
	}
	p.close()
}

// TestProducerSnapshotTransactions: an entry keeps its producer's open
// transaction (current_txn_first_offset) and last coordinator epoch, at
// bytes 38 and 34 of the entry as in Kafka's v1 schema; a producer known
// only by a marker is written with last_sequence -1, last_offset -1,
// offset_delta 0, timestamp -1 and comes back with no batch.
func TestProducerSnapshotTransactions(t *testing.T) {
	in := map[int64]*producerState{3: newProducerState(1), 4: newProducerState(2)}
	in[3].push(producerBatch{firstSeq: 0, lastSeq: 4, firstOffset: 20, maxTimestamp: 77})
	in[3].txnFirst, in[3].coordinatorEpoch = 20, 5
	in[4].coordinatorEpoch = 6 // only a marker left
	b := encodeProducerSnapshot(in)
	e := b[snapshotHeader+4+snapshotEntrySize:] // producer 4, after 3
	want := []byte{0, 0, 0, 0, 0, 0, 0, 4, 0, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if !bytes.Equal(e, want) {
		t.Fatalf("marker-only entry % x, want % x", e, want)
	}
	out, err := decodeProducerSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if s := out[3]; s.txnFirst != 20 || s.coordinatorEpoch != 5 || s.n != 1 || *s.last() != *in[3].last() {
		t.Fatalf("producer 3: %+v", s)
	}
	if s := out[4]; s.txnFirst != -1 || s.coordinatorEpoch != 6 || s.n != 0 || s.epoch != 2 {
		t.Fatalf("producer 4: %+v", s)
	}
}
