package segment

import (
	"encoding/binary"
	"sort"
	"sync"
)

const (
	offsetEntrySize = 8  // relative offset int32 | position int32
	timeEntrySize   = 12 // timestamp int64 | relative offset int32
)

// offsetEntry is one entry of the sparse offset index: the batch at byte
// position pos has last offset base+rel (Kafka indexes a batch by its last
// offset, so a lookup of any offset >= that one may start scanning there).
type offsetEntry struct{ rel, pos int32 }

// timeEntry is one entry of the time index: up to and including offset
// base+rel, no batch of the segment has a maxTimestamp above ts.
type timeEntry struct {
	ts  int64
	rel int32
}

// indexes holds a segment's offset and time index in memory. The appender
// adds entries; readers look them up concurrently.
type indexes struct {
	mu sync.RWMutex // guards off and tim; never held across IO
	// Invariant: rel and pos strictly increase; every pos is the start of
	// a batch below the segment's committed size once that is published.
	off []offsetEntry
	// Invariant: ts and rel strictly increase.
	tim []timeEntry

	// Owned by the appender (Log.mu): entries already written to the files.
	offWritten, timWritten int
}

func (ix *indexes) addOffset(rel, pos int32) {
	ix.mu.Lock()
	ix.off = append(ix.off, offsetEntry{rel, pos})
	ix.mu.Unlock()
}

// addTime appends a time entry if ts is above the last one (the time index
// is monotonic) and rel is past it.
func (ix *indexes) addTime(ts int64, rel int32) {
	ix.mu.Lock()
	if n := len(ix.tim); n == 0 || (ts > ix.tim[n-1].ts && rel > ix.tim[n-1].rel) {
		ix.tim = append(ix.tim, timeEntry{ts, rel})
	}
	ix.mu.Unlock()
}

// lookupOffset returns the position of the last indexed batch whose last
// offset is <= base+rel and that starts below limit, or 0.
func (ix *indexes) lookupOffset(rel int32, limit int64) int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	i := sort.Search(len(ix.off), func(i int) bool {
		return ix.off[i].rel > rel || int64(ix.off[i].pos) >= limit
	})
	if i == 0 {
		return 0
	}
	return int64(ix.off[i-1].pos)
}

// lookupPosition returns the largest indexed position <= limit, or 0.
func (ix *indexes) lookupPosition(limit int64) int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	i := sort.Search(len(ix.off), func(i int) bool { return int64(ix.off[i].pos) > limit })
	if i == 0 {
		return 0
	}
	return int64(ix.off[i-1].pos)
}

// lookupTime returns the relative offset of the last time entry whose
// timestamp is below ts: every batch up to that offset is older than ts.
func (ix *indexes) lookupTime(ts int64) (rel int32, ok bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	i := sort.Search(len(ix.tim), func(i int) bool { return ix.tim[i].ts >= ts })
	if i == 0 {
		return 0, false
	}
	return ix.tim[i-1].rel, true
}

// lastTime returns the last time entry.
func (ix *indexes) lastTime() (timeEntry, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if len(ix.tim) == 0 {
		return timeEntry{}, false
	}
	return ix.tim[len(ix.tim)-1], true
}

// lastOffset returns the last offset entry.
func (ix *indexes) lastOffset() (offsetEntry, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if len(ix.off) == 0 {
		return offsetEntry{}, false
	}
	return ix.off[len(ix.off)-1], true
}

// truncate drops offset entries at or after byte position pos and time
// entries at or after relative offset rel.
func (ix *indexes) truncate(pos int64, rel int32) {
	ix.mu.Lock()
	i := sort.Search(len(ix.off), func(i int) bool { return int64(ix.off[i].pos) >= pos })
	ix.off = ix.off[:i]
	j := sort.Search(len(ix.tim), func(j int) bool { return ix.tim[j].rel >= rel })
	ix.tim = ix.tim[:j]
	ix.offWritten = min(ix.offWritten, i)
	ix.timWritten = min(ix.timWritten, j)
	ix.mu.Unlock()
}

// pending encodes the entries not yet written to the files, appending to
// the two scratch buffers, and returns them with the file positions to
// write them at. The caller marks them written with markWritten.
func (ix *indexes) pending(offBuf, timBuf []byte) (ob []byte, oat int64, tb []byte, tat int64) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	be := binary.BigEndian
	for _, e := range ix.off[ix.offWritten:] {
		offBuf = be.AppendUint32(offBuf, uint32(e.rel))
		offBuf = be.AppendUint32(offBuf, uint32(e.pos))
	}
	for _, e := range ix.tim[ix.timWritten:] {
		timBuf = be.AppendUint64(timBuf, uint64(e.ts))
		timBuf = be.AppendUint32(timBuf, uint32(e.rel))
	}
	return offBuf, int64(ix.offWritten) * offsetEntrySize, timBuf, int64(ix.timWritten) * timeEntrySize
}

// markWritten records that all entries are in the files.
func (ix *indexes) markWritten() {
	ix.mu.RLock()
	ix.offWritten, ix.timWritten = len(ix.off), len(ix.tim)
	ix.mu.RUnlock()
}

// decodeOffsetIndex parses an offset index file. ok is false if the size is
// not a whole number of entries or the entries are not strictly increasing
// or past segSize.
func decodeOffsetIndex(b []byte, segSize int64) (es []offsetEntry, ok bool) {
	if len(b)%offsetEntrySize != 0 {
		return nil, false
	}
	es = make([]offsetEntry, 0, len(b)/offsetEntrySize+64)
	for ; len(b) > 0; b = b[offsetEntrySize:] {
		e := offsetEntry{int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:]))}
		if e.rel < 0 || e.pos < 0 || int64(e.pos) >= segSize {
			return nil, false
		}
		if n := len(es); n > 0 && (e.rel <= es[n-1].rel || e.pos <= es[n-1].pos) {
			return nil, false
		}
		es = append(es, e)
	}
	return es, true
}

// decodeTimeIndex parses a time index file; ok is false unless the size is
// whole entries and timestamps and offsets strictly increase below maxRel.
func decodeTimeIndex(b []byte, maxRel int32) (es []timeEntry, ok bool) {
	if len(b)%timeEntrySize != 0 {
		return nil, false
	}
	es = make([]timeEntry, 0, len(b)/timeEntrySize+64)
	for ; len(b) > 0; b = b[timeEntrySize:] {
		e := timeEntry{int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:]))}
		if e.rel < 0 || e.rel > maxRel {
			return nil, false
		}
		if n := len(es); n > 0 && (e.ts <= es[n-1].ts || e.rel <= es[n-1].rel) {
			return nil, false
		}
		es = append(es, e)
	}
	return es, true
}
