package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Rewriting closed segments (the log cleaner's side of the log).
//
// A cleaner reads closed segments (ClosedSegments, ScanSegment), writes
// the batches it keeps into a Rewrite, and Commit swaps the new segment in
// for a run of old ones. Offsets never change: a rewritten segment keeps
// the base offset of the first segment it replaces and holds a subset of
// their batches, so a compacted log has offset gaps, which Read, locate
// and the indexes already handle (a read of an offset in a gap returns the
// next batch above it).
//
// The swap is crash safe, in steps that each leave the directory in a
// state Open finishes or undoes:
//
//	1. B.log.cleaned, B.index.cleaned, B.timeindex.cleaned (and
//	   B.txnindex.cleaned when a replaced segment has aborted-transaction
//	   entries) written, fsynced
//	2. B.swap.tmp ("B E\n": replaces the segments with base in [B, E))
//	   fsynced, renamed to B.swap, directory fsynced   <- the commit point
//	3. the old segments in (B, E) deleted, newest first
//	4. B.index.cleaned, B.timeindex.cleaned, B.txnindex.cleaned, then
//	   B.log.cleaned renamed over B.index, B.timeindex, B.txnindex, B.log;
//	   directory fsynced
//
// The new .txnindex keeps the entries of the replaced segments whose ABORT
// marker the rewrite kept with its record: an entry whose marker the
// cleaner dropped (no data of its transaction was left) goes with it, as
// in Kafka's cleaner, so that readers do not skip the producer's later
// batches waiting for a marker that is gone.
//	5. B.swap deleted, directory fsynced
//
// Open without B.swap deletes every *.cleaned and *.swap.tmp file (the old
// segments are untouched: roll back); with B.swap it redoes steps 3-5
// (roll forward: every step is idempotent, and the .cleaned files exist
// until renamed). So a crash at any point leaves the old segments or the
// new one, never a mix, and nothing the cleaner kept is lost. Kafka names
// the swapped-in segment itself B.log.swap; zkafka keeps the replaced
// range in B.swap instead, because a cleaned segment whose last batches
// were all removed cannot tell by its contents which old segments it
// replaces.

const (
	cleanedSuffix = ".cleaned"
	swapSuffix    = ".swap"
)

// ErrRewriteStale is returned by Rewrite.Commit when the segments it
// replaces are no longer all in the log (retention or truncation removed
// one meanwhile); nothing was changed.
var ErrRewriteStale = errors.New("segment: rewritten segments changed under the cleaner")

// AppendAt is Append for a batch that keeps the base offset at, which
// must be at least NextOffset: what a follower does with the batches it
// fetches from a leader whose cleaned log has offset gaps (Kafka's
// appendAsFollower). It returns at.
func (l *Log) AppendAt(batch []byte, count int32, maxTimestamp, at int64) (int64, error) {
	if at < 0 {
		return -1, errInvalid("negative base offset")
	}
	return l.append(batch, count, maxTimestamp, at)
}

// SegmentInfo describes a closed segment.
type SegmentInfo struct {
	Base int64 // base offset: the file name
	// Next is the base offset of the next segment: every batch of this one
	// is below it.
	Next         int64
	Size         int64 // bytes of batches
	MaxTimestamp int64 // largest batch maxTimestamp; math.MinInt64 if empty
}

// ClosedSegments returns the segments before the active one, oldest
// first. They change only by a rewrite, retention or truncation.
func (l *Log) ClosedSegments() []SegmentInfo {
	segs := l.list()
	out := make([]SegmentInfo, 0, len(segs)-1)
	for i, s := range segs[:len(segs)-1] {
		out = append(out, SegmentInfo{Base: s.base, Next: segs[i+1].base,
			Size: s.size.Load(), MaxTimestamp: s.maxTs.Load()})
	}
	return out
}

// ScanSegment calls fn with every batch of the closed segment named base,
// in order, verifying each as recovery does (length, magic 2, CRC-32C,
// increasing offsets). batch aliases a buffer that is reused after fn
// returns. A bad batch is a *CorruptError; an error from fn stops the scan
// and is returned.
func (l *Log) ScanSegment(base int64, fn func(batch []byte) error) error {
	segs := l.list()
	i := findSegment(segs, base)
	if segs[i].base != base || i == len(segs)-1 {
		return fmt.Errorf("segment: no closed segment %d in %s", base, l.dir)
	}
	s := segs[i]
	if !s.acquire() {
		return ErrRewriteStale
	}
	defer s.release()
	var ferr error
	size := s.size.Load()
	end, stop, err := scanBatches(s.log, size, s.base, func(_ int64, b []byte) {
		if ferr == nil {
			ferr = fn(b)
		}
	})
	switch {
	case err != nil:
		return fmt.Errorf("segment: read %s: %w", s.logPath, err)
	case ferr != nil:
		return ferr
	case stop != nil:
		return &CorruptError{File: s.logPath, Pos: stop.pos, Offset: stop.offset, Reason: stop.reason}
	case end != size:
		return &CorruptError{File: s.logPath, Pos: end, Offset: -1, Reason: "trailing bytes"}
	}
	return nil
}

// Rewrite is a segment being written to replace a run of closed segments.
// One goroutine uses it; Commit or Abort ends it.
type Rewrite struct {
	l    *Log
	s    *segment   // files at the .cleaned paths
	olds []*segment // the segments replaced, consecutive
	end  int64      // base offset of the segment after them
	buf  []byte
	// markers are the last offsets of the control batches with a record
	// that were kept (the .txnindex entries that stay).
	markers map[int64]bool
	done    bool
}

// BeginRewrite starts a rewrite of the consecutive closed segments from
// the one named first to the one before the segment named end (end is
// a SegmentInfo.Next). It creates the .cleaned files.
func (l *Log) BeginRewrite(first, end int64) (*Rewrite, error) {
	segs := l.list()
	i := findSegment(segs, first)
	if segs[i].base != first || end <= first {
		return nil, fmt.Errorf("segment: no closed segment %d in %s", first, l.dir)
	}
	j := i
	for j < len(segs)-1 && segs[j].base < end {
		j++
	}
	if segs[j].base != end || end-1-first > math.MaxInt32 {
		return nil, fmt.Errorf("segment: %d is not the base of a segment after %d in %s", end, first, l.dir)
	}
	s, err := openSegmentFiles(suffixFS{l.fs}, l.dir, first, true)
	if err != nil {
		return nil, fmt.Errorf("segment: create cleaned segment %d in %s: %w", first, l.dir, err)
	}
	s.logPath, s.offPath, s.tiPath, s.txnPath = s.logPath+cleanedSuffix, s.offPath+cleanedSuffix, s.tiPath+cleanedSuffix, s.txnPath+cleanedSuffix
	olds := append([]*segment(nil), segs[i:j]...)
	return &Rewrite{l: l, s: s, olds: olds, end: end}, nil
}

// Append adds a batch to the new segment. Batches must come in offset
// order, within the replaced range; batch is copied.
func (w *Rewrite) Append(batch []byte) error {
	if len(batch) < HeaderSize || batchSize(batch) != int64(len(batch)) || batch[offMagic] != batchMagic {
		return errInvalid("rewritten batch is not a whole record batch v2")
	}
	s := w.s
	base := BatchBaseOffset(batch)
	last := base + int64(batchLastOffsetDelta(batch))
	if base < s.next.Load() || last >= w.end {
		return errInvalid(fmt.Sprintf("rewritten batch %d-%d outside [%d, %d)", base, last, s.next.Load(), w.end))
	}
	pos := s.size.Load()
	if pos+int64(len(batch)) > math.MaxInt32 {
		return errInvalid("rewritten segment past 2 GiB")
	}
	if _, err := s.log.WriteAt(batch, pos); err != nil {
		return fmt.Errorf("segment: write %s: %w", s.logPath, err)
	}
	s.indexBatch(pos, last, batchMaxTimestamp(batch), int64(len(batch)), w.l.interval())
	if binary.BigEndian.Uint16(batch[offAttributes:])&attrControl != 0 && binary.BigEndian.Uint32(batch[offRecordCount:]) > 0 {
		if w.markers == nil {
			w.markers = map[int64]bool{}
		}
		w.markers[last] = true
	}
	s.size.Store(pos + int64(len(batch)))
	s.next.Store(last + 1)
	return nil
}

// Size returns the bytes written so far.
func (w *Rewrite) Size() int64 { return w.s.size.Load() }

// Abort deletes the new segment's files; the log is unchanged.
func (w *Rewrite) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.s.release()
	w.s.remove(w.l.fs)
}

// Commit makes the new segment durable and swaps it in for the old ones
// (see the steps above). Readers holding a FileRange of an old segment
// keep reading it until they release it. If the old segments are no
// longer in the log it aborts with ErrRewriteStale.
func (w *Rewrite) Commit() error {
	if w.done {
		return errors.New("segment: rewrite already ended")
	}
	s, l := w.s, w.l
	if m := s.maxTs.Load(); m != minTimestamp {
		s.ix.addTime(m, s.offsetOfMaxTs)
	}
	var err error
	w.buf, _, err = s.writeIndexes(w.buf, nil)
	if err == nil {
		err = w.writeTxnIndex()
	}
	if err == nil {
		err = s.syncAll(l.fs)
	}
	if err != nil {
		w.Abort()
		return fmt.Errorf("segment: write cleaned segment %s: %w", s.logPath, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		w.Abort()
		return err
	}
	segs := l.list()
	i := findSegment(segs, w.olds[0].base)
	if i+len(w.olds) >= len(segs) || !sameSegments(segs[i:i+len(w.olds)], w.olds) {
		w.Abort()
		return ErrRewriteStale
	}
	if err := writeSwapFile(l.fs, l.dir, w.olds[0].base, w.end); err != nil {
		w.Abort()
		return err
	}
	// Committed: from here on a failure is finished by the next Open.
	w.done = true
	err = finishSwap(l.fs, l.dir, w.olds[0].base, w.end, basesOf(w.olds[1:]))
	s.logPath, s.offPath, s.tiPath, s.txnPath = finalPath(s.logPath), finalPath(s.offPath), finalPath(s.tiPath), finalPath(s.txnPath)
	s.ix.offWritten, s.ix.timWritten = len(s.ix.off), len(s.ix.tim)
	s.next.Store(w.end)
	s.fileEnd = s.size.Load()
	s.created = w.olds[0].created
	next := make([]*segment, 0, len(segs)-len(w.olds)+1)
	next = append(append(append(next, segs[:i]...), s), segs[i+len(w.olds):]...)
	l.publish(next)
	for _, o := range w.olds {
		o.release()
	}
	if err != nil {
		l.mu.syncErr = fmt.Errorf("segment: finishing the swap of segment %d: %w", w.olds[0].base, err)
		return l.mu.syncErr
	}
	return nil
}

// writeTxnIndex writes the new segment's .txnindex.cleaned when one of
// the replaced segments has entries: those whose marker was kept (an
// empty file when none was, so that the rename replaces B.txnindex).
func (w *Rewrite) writeTxnIndex() error {
	var keep []AbortedTxn
	had := false
	for _, o := range w.olds {
		for _, e := range o.abortedTxns() {
			had = true
			if w.markers[e.LastOffset] {
				keep = append(keep, e)
			}
		}
	}
	if !had {
		return nil
	}
	b := make([]byte, 0, len(keep)*txnEntrySize)
	for _, e := range keep {
		b = appendTxnEntry(b, e)
	}
	f, err := w.l.fs.OpenFile(w.s.txnPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, 0)
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	if len(keep) > 0 {
		w.s.aborted.Store(&keep)
	}
	w.s.txnDirty = true
	return nil
}

func sameSegments(a, b []*segment) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func basesOf(segs []*segment) []int64 {
	out := make([]int64, len(segs))
	for i, s := range segs {
		out[i] = s.base
	}
	return out
}

func finalPath(p string) string { return strings.TrimSuffix(p, cleanedSuffix) }

// suffixFS opens files under their name plus ".cleaned" (openSegmentFiles
// names them; BeginRewrite then adds the suffix to the paths it keeps).
type suffixFS struct{ FS }

func (f suffixFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	return f.FS.OpenFile(name+cleanedSuffix, flag, perm)
}

func swapPath(dir string, base int64) string {
	return filepath.Join(dir, segmentName(base, swapSuffix))
}

// writeSwapFile durably names the swap of the segments [base, end) by the
// cleaned segment base: the commit point.
func writeSwapFile(fsys FS, dir string, base, end int64) error {
	path := swapPath(dir, base)
	tmp := path + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_, err = f.WriteAt([]byte(fmt.Sprintf("%d %d\n", base, end)), 0)
		err = errors.Join(err, f.Sync(), f.Close())
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		fsys.Remove(tmp)
		return fmt.Errorf("segment: write %s: %w", path, err)
	}
	return nil
}

// finishSwap does steps 3-5: it deletes the replaced segments above base
// (given, or all segments in (base, end) found on disk), renames the
// cleaned files into place and deletes the swap file. Every step may be
// redone after a crash.
func finishSwap(fsys FS, dir string, base, end int64, olds []int64) error {
	for i := len(olds) - 1; i >= 0; i-- {
		for _, ext := range []string{".log", ".index", ".timeindex", txnIndexExt} {
			if err := fsys.Remove(filepath.Join(dir, segmentName(olds[i], ext))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	for _, ext := range []string{".index", ".timeindex", txnIndexExt, ".log"} {
		p := filepath.Join(dir, segmentName(base, ext))
		if err := fsys.Rename(p+cleanedSuffix, p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		return err
	}
	if err := fsys.Remove(swapPath(dir, base)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return fsys.SyncDir(dir)
}

// recoverSwaps finishes committed swaps and deletes the files of
// uncommitted ones, before the segments are loaded (see the steps above).
func (l *Log) recoverSwaps() error {
	ents, err := l.fs.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("segment: list %s: %w", l.dir, err)
	}
	var bases []int64
	var swaps [][2]int64
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, cleanedSuffix) || strings.HasSuffix(name, swapSuffix+".tmp"):
			// Deleted below unless a committed swap still needs it.
		case strings.HasSuffix(name, swapSuffix):
			b, end, err := l.readSwapFile(name)
			if err != nil {
				return err
			}
			swaps = append(swaps, [2]int64{b, end})
		default:
			if b, ok := parseSegmentName(name); ok {
				bases = append(bases, b)
			}
		}
	}
	for _, sw := range swaps {
		var olds []int64
		for _, b := range bases {
			if b > sw[0] && b < sw[1] {
				olds = append(olds, b)
			}
		}
		l.logger.Warn("segment: finishing a log cleaner swap interrupted by a crash",
			"dir", l.dir, "base", sw[0], "end", sw[1], "replaced", len(olds)+1)
		if err := finishSwap(l.fs, l.dir, sw[0], sw[1], olds); err != nil {
			return fmt.Errorf("segment: finish the swap of segment %d in %s: %w", sw[0], l.dir, err)
		}
	}
	removed := false
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, cleanedSuffix) || strings.HasSuffix(name, swapSuffix+".tmp") {
			if err := l.fs.Remove(filepath.Join(l.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("segment: delete %s: %w", name, err)
			}
			removed = true
		}
	}
	if removed {
		return l.fs.SyncDir(l.dir)
	}
	return nil
}

// readSwapFile parses a swap file ("base end\n").
func (l *Log) readSwapFile(name string) (base, end int64, err error) {
	path := filepath.Join(l.dir, name)
	f, err := l.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("segment: open %s: %w", path, err)
	}
	defer f.Close()
	var b [64]byte
	n, _ := f.ReadAt(b[:], 0)
	fields := strings.Fields(string(b[:n]))
	if len(fields) == 2 {
		base, err1 := strconv.ParseInt(fields[0], 10, 64)
		end, err2 := strconv.ParseInt(fields[1], 10, 64)
		if err1 == nil && err2 == nil && base >= 0 && end > base {
			return base, end, nil
		}
	}
	return 0, 0, &CorruptError{File: path, Pos: 0, Offset: -1, Reason: fmt.Sprintf("bad swap file %q", b[:n])}
}
