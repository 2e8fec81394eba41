package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The aborted-transaction index: Kafka's {base}.txnindex file beside each
// segment (TransactionIndex, AbortedTxn), one entry per transaction
// aborted by an ABORT marker in that segment, in marker order. Entries of
// 34 bytes, big-endian:
//
//	 0  version            int16  0
//	 2  producerId         int64
//	10  firstOffset        int64  the transaction's first batch
//	18  lastOffset         int64  its ABORT marker (in this segment)
//	26  lastStableOffset   int64  the partition's LSO once it was aborted
//
// The log keeps the entries in memory too (read by fetches without a
// lock); the file is written at each AppendAbortedTxn without an fsync and
// fsynced with its segment (roll, Close), so a crash may lose its tail:
// Open drops entries past the recovered log end, and the broker writes the
// markers it replays after its producer snapshot again (AppendAbortedTxn
// ignores an entry already there). The file goes with its segment
// (retention, start offset, truncation, cleaning); truncation drops the
// entries at or above the cut, as Kafka's TransactionIndex.truncateTo.

// AbortedTxn is one entry of a .txnindex file.
type AbortedTxn struct {
	ProducerID, FirstOffset, LastOffset, LastStableOffset int64
}

const (
	txnEntrySize  = 34
	txnVersion    = 0
	txnIndexExt   = ".txnindex"
	maxTxnEntries = 1 << 24 // a sanity bound on a file read at Open
)

func appendTxnEntry(dst []byte, e AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, txnVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(e.LastStableOffset))
}

// decodeTxnEntries reads whole entries of version 0; it stops at a torn
// tail or an entry of another version (what follows is not trusted).
func decodeTxnEntries(b []byte) []AbortedTxn {
	var out []AbortedTxn
	for ; len(b) >= txnEntrySize; b = b[txnEntrySize:] {
		if binary.BigEndian.Uint16(b) != txnVersion {
			break
		}
		out = append(out, AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(b[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(b[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(b[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(b[26:])),
		})
	}
	return out
}

// abortedTxns is the segment's entries (nil when none); the slice is never
// changed after it is published.
func (s *segment) abortedTxns() []AbortedTxn {
	if p := s.aborted.Load(); p != nil {
		return *p
	}
	return nil
}

// writeTxnFile replaces the segment's .txnindex with entries (removing it
// when there are none). It does not fsync.
func writeTxnFile(fsys FS, path string, entries []AbortedTxn) error {
	if len(entries) == 0 {
		if err := fsys.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	b := make([]byte, 0, len(entries)*txnEntrySize)
	for _, e := range entries {
		b = appendTxnEntry(b, e)
	}
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, 0)
	return errors.Join(err, f.Close())
}

// loadTxnIndex reads s's .txnindex at Open, keeping the entries whose
// marker is below the segment's recovered end and rewriting the file
// when some were dropped (a torn tail, or markers lost with a torn log).
func (l *Log) loadTxnIndex(s *segment) error {
	f, err := l.fs.OpenFile(s.txnPath, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("segment: open %s: %w", s.txnPath, err)
	}
	size, err := fileSize(f, s.txnPath)
	if err != nil || size > maxTxnEntries*txnEntrySize {
		f.Close()
		return errors.Join(err, fmt.Errorf("segment: %s is %d bytes", s.txnPath, size))
	}
	b := make([]byte, size)
	_, err = f.ReadAt(b, 0)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("segment: read %s: %w", s.txnPath, err)
	}
	all := decodeTxnEntries(b)
	keep := all
	for i, e := range all {
		if e.LastOffset >= s.next.Load() || e.LastOffset < s.base {
			keep = all[:i]
			break
		}
	}
	if len(keep)*txnEntrySize != len(b) {
		l.logger.Warn("segment: dropping aborted-transaction index entries past the log end", "file", s.txnPath,
			"kept", len(keep), "bytes", len(b))
		if err := writeTxnFile(l.fs, s.txnPath, keep); err != nil {
			return fmt.Errorf("segment: rewrite %s: %w", s.txnPath, err)
		}
	}
	if len(keep) > 0 {
		s.aborted.Store(&keep)
	}
	return nil
}

// AppendAbortedTxn adds e to the .txnindex of the segment holding its
// marker (e.LastOffset, below NextOffset). An entry whose marker is not
// after the segment's last entry is already there (a replay after a
// restart) and is ignored.
func (l *Log) AppendAbortedTxn(e AbortedTxn) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	segs := l.list()
	if e.LastOffset >= l.NextOffset() || e.LastOffset < segs[0].base {
		return errInvalid(fmt.Sprintf("aborted transaction marker %d outside the log [%d, %d)", e.LastOffset, segs[0].base, l.NextOffset()))
	}
	s := segs[findSegment(segs, e.LastOffset)]
	old := s.abortedTxns()
	if n := len(old); n > 0 && old[n-1].LastOffset >= e.LastOffset {
		return nil
	}
	f, err := l.fs.OpenFile(s.txnPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("segment: open %s: %w", s.txnPath, err)
	}
	_, err = f.WriteAt(appendTxnEntry(nil, e), int64(len(old))*txnEntrySize)
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("segment: write %s: %w", s.txnPath, err)
	}
	next := append(old[:len(old):len(old)], e)
	s.aborted.Store(&next)
	s.txnDirty = true
	return nil
}

// AbortedTxns collects the aborted transactions a read of [from, upper)
// must report (Kafka's UnifiedLog.collectAbortedTransactions): those whose
// marker is at or after from and whose first offset is below upper, from
// the segment holding from onwards, stopping at the first entry whose
// last stable offset reaches upper (no later one can start below it).
func (l *Log) AbortedTxns(from, upper int64) []AbortedTxn {
	segs := l.list()
	var out []AbortedTxn
	for _, s := range segs[findSegment(segs, from):] {
		for _, e := range s.abortedTxns() {
			if e.LastOffset >= from && e.FirstOffset < upper {
				out = append(out, e)
			}
			if e.LastStableOffset >= upper {
				return out
			}
		}
	}
	return out
}

// cutTxnIndexLocked drops s's entries whose marker is at or above end (a
// truncation). l.mu must be held.
func (l *Log) cutTxnIndexLocked(s *segment, end int64) error {
	old := s.abortedTxns()
	n := len(old)
	for n > 0 && old[n-1].LastOffset >= end {
		n--
	}
	if n == len(old) {
		return nil
	}
	keep := old[:n:n]
	s.aborted.Store(&keep)
	return writeTxnFile(l.fs, s.txnPath, keep)
}

// syncTxnIndex fsyncs s's .txnindex if entries were appended since.
func (s *segment) syncTxnIndex(fsys FS) error {
	if !s.txnDirty {
		return nil
	}
	f, err := fsys.OpenFile(s.txnPath, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		s.txnDirty = false
		return nil
	}
	if err != nil {
		return err
	}
	if err = errors.Join(f.Sync(), f.Close()); err == nil {
		s.txnDirty = false
	}
	return err
}
