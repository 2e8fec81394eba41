package broker

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/zkafka/zkafka/kproto"
)

// txnBatch is idempotentBatch with the transactional attribute.
func txnTestBatch(pid int64, epoch int16, seq int32) kproto.Batch {
	b := kproto.Batch(idempotentBatch(pid, epoch, seq))
	binary.BigEndian.PutUint16(b[21:], kproto.AttrTransactional)
	b.SetCRC()
	return b
}

// TestVerificationGuard: with verification on, a transactional batch that
// opens a transaction needs the guard of a verification for its producer
// and epoch; a marker in between (the transaction ended) or another
// guard refuses it with INVALID_TXN_STATE; once open, the transaction's
// later batches need none; the marker closes it again.
func TestVerificationGuard(t *testing.T) {
	_, p := newTestBroker(t)
	on := func(g uint64) txnCheck { return txnCheck{verify: true, guard: g} }
	now := time.Now()
	steps := []struct {
		name string
		run  func() kproto.ErrorCode
		want kproto.ErrorCode
	}{
		{"unverified", func() kproto.ErrorCode { return p.appendChecked(txnTestBatch(1, 0, 0), now, on(0)).code }, kproto.CodeInvalidTxnState},
		{"verification off", func() kproto.ErrorCode {
			return p.appendChecked(txnTestBatch(2, 0, 0), now, txnCheck{}).code
		}, kproto.CodeNone},
		{"other guard", func() kproto.ErrorCode {
			p.startVerification(1, 0)
			return p.appendChecked(txnTestBatch(1, 0, 0), now, on(12345)).code
		}, kproto.CodeInvalidTxnState},
		{"other epoch", func() kproto.ErrorCode {
			g := p.startVerification(1, 0)
			return p.appendChecked(txnTestBatch(1, 1, 0), now, on(g)).code
		}, kproto.CodeInvalidTxnState},
		{"marker in between", func() kproto.ErrorCode {
			g := p.startVerification(1, 0)
			if _, code, _ := p.appendMarker(1, 0, 0, false, now); code != kproto.CodeNone {
				return code
			}
			return p.appendChecked(txnTestBatch(1, 0, 0), now, on(g)).code
		}, kproto.CodeInvalidTxnState},
		{"verified", func() kproto.ErrorCode {
			g := p.startVerification(1, 0)
			return p.appendChecked(txnTestBatch(1, 0, 0), now, on(g)).code
		}, kproto.CodeNone},
		{"open transaction", func() kproto.ErrorCode { return p.appendChecked(txnTestBatch(1, 0, 1), now, on(0)).code }, kproto.CodeNone},
		{"guard used up", func() kproto.ErrorCode {
			if _, code, _ := p.appendMarker(1, 0, 0, true, now); code != kproto.CodeNone {
				return code
			}
			return p.appendChecked(txnTestBatch(1, 0, 2), now, on(0)).code
		}, kproto.CodeInvalidTxnState},
	}
	for _, s := range steps {
		if got := s.run(); got != s.want {
			t.Fatalf("%s: %v, want %v", s.name, got, s.want)
		}
	}
}

// TestLastStableOffset: open transactions hold the LSO at their first
// offset; a completed one holds it until the high watermark passes its
// marker; an abort writes its .txnindex entry with the LSO after it.
func TestLastStableOffset(t *testing.T) {
	b, p := newReplicatedTestBroker(t)
	_ = b
	now := time.Now()
	follow := func(leo int64) { // followers 1 and 2 fetch at leo
		p.followerFetched(1, leo, 0, now)
		p.followerFetched(2, leo, 0, now)
	}
	must := func(code kproto.ErrorCode) {
		t.Helper()
		if code != kproto.CodeNone {
			t.Fatal(code)
		}
	}
	must(p.appendBatch(testBatch(5), now).code)          // 0
	must(p.appendBatch(txnTestBatch(7, 0, 0), now).code) // 1: pid 7 opens
	must(p.appendBatch(txnTestBatch(8, 0, 0), now).code) // 2: pid 8 opens
	follow(3)
	if hw, lso := p.highWatermark(), p.lastStableOffset(); hw != 3 || lso != 1 {
		t.Fatalf("hw %d lso %d, want 3 and 1", hw, lso)
	}
	_, code, _ := p.appendMarker(7, 0, 0, false, now) // 3: abort 7
	must(code)
	if lso := p.lastStableOffset(); lso != 1 {
		t.Fatalf("lso %d before the abort marker is replicated, want 1", lso)
	}
	follow(4)
	if lso := p.lastStableOffset(); lso != 2 {
		t.Fatalf("lso %d after the abort is replicated, want 2 (pid 8's transaction)", lso)
	}
	if got := p.log.AbortedTxns(0, 10); len(got) != 1 || got[0].ProducerID != 7 || got[0].FirstOffset != 1 ||
		got[0].LastOffset != 3 || got[0].LastStableOffset != 2 {
		t.Fatalf("aborted index %+v, want pid 7 [1, 3] LSO 2", got)
	}
	_, code, _ = p.appendMarker(8, 0, 0, true, now) // 4: commit 8
	must(code)
	follow(5)
	if lso, first := p.lastStableOffset(), p.firstUnstable.Load(); lso != 5 || first != math.MaxInt64 {
		t.Fatalf("lso %d (first unstable %d), want 5 and none", lso, first)
	}
}

// TestCleanerStopsAtTheLSO: the cleaner's segments are the closed ones
// wholly below the last stable offset.
func TestCleanerStopsAtTheLSO(t *testing.T) {
	_, p := newTestBroker(t)
	now := time.Now()
	roll := func() {
		t.Helper()
		if err := p.log.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	p.appendBatch(testBatch(5), now) // 0
	roll()
	p.appendBatch(txnTestBatch(3, 0, 0), now) // 1: opens
	roll()
	p.appendBatch(testBatch(5), now) // 2
	roll()
	if segs := p.stableSegments(); len(segs) != 1 || segs[0].Base != 0 {
		t.Fatalf("with a transaction open at 1: %+v, want segment 0 only", segs)
	}
	if _, code, _ := p.appendMarker(3, 0, 0, true, now); code != kproto.CodeNone {
		t.Fatal(code)
	}
	roll()
	if segs := p.stableSegments(); len(segs) != 4 {
		t.Fatalf("after the commit: %+v, want all 4 closed segments", segs)
	}
}

// TestEmptiedMarkerEndsTheTransaction: a control batch the cleaner
// emptied (no record) ends its producer's open transaction when the
// state is rebuilt past it.
func TestEmptiedMarkerEndsTheTransaction(t *testing.T) {
	_, p := newTestBroker(t)
	now := time.Now()
	if res := p.appendBatch(txnTestBatch(5, 0, 0), now); res.code != kproto.CodeNone {
		t.Fatal(res.code)
	}
	empty := kproto.Batch(kproto.AppendBatch(nil, kproto.BatchHeader{Attributes: kproto.AttrTransactional | kproto.AttrControl,
		ProducerID: 5, ProducerEpoch: 0, BaseSequence: -1}, nil))
	p.mu.Lock()
	p.recordBatchLocked(empty, 1)
	open := p.mu.producers[5].txnFirst
	p.hw.Store(2) // the high watermark passes the marker
	p.hwMovedLocked()
	p.mu.Unlock()
	if open != -1 || p.firstUnstable.Load() != math.MaxInt64 {
		t.Fatalf("after an emptied marker: open transaction at %d, first unstable %d", open, p.firstUnstable.Load())
	}
}
