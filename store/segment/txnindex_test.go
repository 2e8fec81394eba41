package segment

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// markerBatch is a one-record control batch (the txnindex rewrite keeps
// the entries of the control batches with a record it keeps).
func markerBatch(off int64) []byte {
	b := AppendBatch(nil, payloadFor(off, 40), 1, off)
	binary.BigEndian.PutUint16(b[offAttributes:], 0x30) // transactional | control
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	return b
}

// txnLog is a log of 40 one-offset batches in segments of 10 batches where
// every batch at an offset ≡ 9 (mod 10) is an ABORT marker covering the
// 5 offsets before it.
func txnLog(t *testing.T, dir string) (*Log, []AbortedTxn) {
	t.Helper()
	l := mustOpen(t, dir, Options{SegmentBytes: 10 * (HeaderSize + 40), IndexIntervalBytes: 1})
	var want []AbortedTxn
	for i := range int64(40) {
		b := AppendBatch(nil, payloadFor(i, 40), 1, i)
		if i%10 == 9 {
			b = markerBatch(i)
		}
		if _, err := l.Append(b, 1, i); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			e := AbortedTxn{ProducerID: 7, FirstOffset: i - 5, LastOffset: i, LastStableOffset: i + 1}
			if err := l.AppendAbortedTxn(e); err != nil {
				t.Fatal(err)
			}
			want = append(want, e)
		}
	}
	return l, want
}

func TestTxnIndexFilesAndCollect(t *testing.T) {
	dir := t.TempDir()
	l, want := txnLog(t, dir)
	// Kafka's layout: version int16 0 | pid | first | last | LSO, 34 bytes.
	data, err := os.ReadFile(filepath.Join(dir, segmentName(0, ".txnindex")))
	if err != nil {
		t.Fatal(err)
	}
	exp := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 10}
	if !slices.Equal(data, exp) {
		t.Fatalf("00000000000000000000.txnindex = %v, want %v", data, exp)
	}
	// A replayed entry (same marker) is not written twice.
	if err := l.AppendAbortedTxn(want[3]); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		from, upper int64
		want        []AbortedTxn
	}{
		{0, 40, want},
		{0, 4, nil},
		{0, 5, want[:1]},
		{10, 20, want[1:2]},
		{12, 15, want[1:2]},
		{20, 40, want[2:]},
	} {
		if got := l.AbortedTxns(tc.from, tc.upper); !slices.Equal(got, tc.want) {
			t.Errorf("AbortedTxns(%d, %d) = %v, want %v", tc.from, tc.upper, got, tc.want)
		}
	}
	// Reopen: the entries come back from the files.
	l.Close()
	l = mustOpen(t, dir, Options{SegmentBytes: 10 * (HeaderSize + 40), IndexIntervalBytes: 1})
	if got := l.AbortedTxns(0, 40); !slices.Equal(got, want) {
		t.Fatalf("after reopen: %v, want %v", got, want)
	}
	// Truncation drops the entries at or past the cut, and the segments after it.
	if _, err := l.Truncate(19); err != nil {
		t.Fatal(err)
	}
	if got := l.AbortedTxns(0, 40); !slices.Equal(got, want[:1]) {
		t.Fatalf("after truncation to 19: %v, want %v", got, want[:1])
	}
	if _, err := os.Stat(filepath.Join(dir, segmentName(10, ".txnindex"))); !os.IsNotExist(err) {
		t.Fatalf("segment 10's .txnindex after the cut of its only marker: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, segmentName(20, ".txnindex"))); !os.IsNotExist(err) {
		t.Fatalf("segment 20's .txnindex after its segment was truncated away: %v", err)
	}
	// The start offset past segment 0 deletes its .txnindex with it.
	if err := l.SetStartOffset(12); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, segmentName(0, ".txnindex"))); !os.IsNotExist(err) {
		t.Fatalf("segment 0's .txnindex after its deletion: %v", err)
	}
	if got := l.AbortedTxns(12, 40); len(got) != 0 {
		t.Fatalf("after the deletion: %v", got)
	}
	l.Close()
}

func TestTxnIndexTornTailDropped(t *testing.T) {
	dir := t.TempDir()
	l, want := txnLog(t, dir)
	l.Close()
	// A torn entry, and one past the log end (its marker lost in a crash).
	path := filepath.Join(dir, segmentName(30, ".txnindex"))
	data, _ := os.ReadFile(path)
	data = appendTxnEntry(data, AbortedTxn{ProducerID: 8, FirstOffset: 35, LastOffset: 45, LastStableOffset: 46})
	data = append(data, 0, 0, 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, Options{SegmentBytes: 10 * (HeaderSize + 40), IndexIntervalBytes: 1})
	defer l.Close()
	if got := l.AbortedTxns(0, 50); !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	if got, _ := os.ReadFile(path); len(got) != txnEntrySize {
		t.Fatalf("the file was not rewritten: %d bytes", len(got))
	}
}

func TestTxnIndexRewriteKeepsKeptMarkers(t *testing.T) {
	dir := t.TempDir()
	l, want := txnLog(t, dir)
	defer l.Close()
	closed := l.ClosedSegments()
	w, err := l.BeginRewrite(closed[0].Base, closed[len(closed)-1].Next)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range closed {
		err := l.ScanSegment(s.Base, func(b []byte) error {
			if BatchBaseOffset(b) == 19 { // the second marker goes
				return nil
			}
			return w.Append(b)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	exp := []AbortedTxn{want[0], want[2], want[3]}
	if got := l.AbortedTxns(0, 40); !slices.Equal(got, exp) {
		t.Fatalf("%v, want %v", got, exp)
	}
	for _, base := range []int64{10, 20} {
		if _, err := os.Stat(filepath.Join(dir, segmentName(base, ".txnindex"))); !os.IsNotExist(err) {
			t.Fatalf("replaced segment %d's .txnindex: %v", base, err)
		}
	}
	l.Close()
	l2 := mustOpen(t, dir, Options{SegmentBytes: 10 * (HeaderSize + 40), IndexIntervalBytes: 1})
	defer l2.Close()
	if got := l2.AbortedTxns(0, 40); !slices.Equal(got, exp) {
		t.Fatalf("after reopen: %v, want %v", got, exp)
	}
}

func TestTxnIndexGoesWithRetention(t *testing.T) {
	dir := t.TempDir()
	l, want := txnLog(t, dir)
	defer l.Close()
	l.SetLimits(Options{SegmentBytes: 10 * (HeaderSize + 40), RetentionBytes: 2 * 10 * (HeaderSize + 40)})
	n, err := l.EnforceRetention()
	if err != nil || n != 2 {
		t.Fatalf("EnforceRetention: %d segments, %v; want 2", n, err)
	}
	for _, base := range []int64{0, 10} {
		if _, err := os.Stat(filepath.Join(dir, segmentName(base, ".txnindex"))); !os.IsNotExist(err) {
			t.Fatalf("segment %d's .txnindex after retention: %v", base, err)
		}
	}
	if got := l.AbortedTxns(l.StartOffset(), 40); !slices.Equal(got, want[2:]) {
		t.Fatalf("after retention: %v, want %v", got, want[2:])
	}
}
