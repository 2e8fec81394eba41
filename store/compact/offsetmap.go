package compact

import (
	"crypto/md5"
	"encoding/binary"
)

// OffsetMap maps the MD5 of a key to the latest offset of the key, in a
// fixed buffer, as Kafka's SkimpyOffsetMap: 24 bytes a slot (16 of hash,
// 8 of offset), open addressing with linear probing, filled up to a load
// factor of 0.9. Two keys with the same MD5 are taken as one, as in Kafka.
// The memory is the buffer and nothing else, so log.cleaner.dedupe.buffer.size
// bounds it.
type OffsetMap struct {
	buf      []byte
	slots    int
	capacity int // entries allowed: slots * 0.9
	size     int
	latest   int64 // largest offset put; -1 when empty
	used     bool  // buf has entries to clear
}

const (
	slotSize   = md5.Size + 8
	loadFactor = 0.9
)

// NewOffsetMap returns a map in a buffer of memory bytes (at least one
// slot).
func NewOffsetMap(memory int) *OffsetMap {
	slots := max(memory/slotSize, 1)
	return &OffsetMap{buf: make([]byte, slots*slotSize), slots: slots,
		capacity: max(int(float64(slots)*loadFactor), 1), latest: -1}
}

// Clear empties the map.
func (m *OffsetMap) Clear() {
	if m.used {
		clear(m.buf)
	}
	m.size, m.latest, m.used = 0, -1, false
}

// Len is the number of keys; Capacity how many fit.
func (m *OffsetMap) Len() int      { return m.size }
func (m *OffsetMap) Capacity() int { return m.capacity }

// Full reports whether n more keys might not fit.
func (m *OffsetMap) Full(n int) bool { return m.size+n > m.capacity }

// LatestOffset is the largest offset put since Clear, or -1.
func (m *OffsetMap) LatestOffset() int64 { return m.latest }

// MemoryBytes is the size of the buffer.
func (m *OffsetMap) MemoryBytes() int { return len(m.buf) }

// slot finds the slot of hash h: the one holding it, or the empty one
// where it goes.
func (m *OffsetMap) slot(h *[md5.Size]byte) (pos int, found bool) {
	i := int(binary.BigEndian.Uint64(h[:8]) % uint64(m.slots))
	for {
		p := i * slotSize
		stored := binary.BigEndian.Uint64(m.buf[p+md5.Size:])
		if stored == 0 {
			return p, false
		}
		if string(m.buf[p:p+md5.Size]) == string(h[:]) {
			return p, true
		}
		if i++; i == m.slots {
			i = 0
		}
	}
}

// Put records offset as the latest of key. The caller checks Full first:
// Put into a full map panics.
func (m *OffsetMap) Put(key []byte, offset int64) {
	h := md5.Sum(key)
	p, found := m.slot(&h)
	if !found {
		if m.size >= m.capacity {
			panic("compact: OffsetMap.Put into a full map")
		}
		copy(m.buf[p:], h[:])
		m.size++
	}
	// Stored +1 so that a zero slot is empty.
	binary.BigEndian.PutUint64(m.buf[p+md5.Size:], uint64(offset)+1)
	m.used = true
	m.latest = max(m.latest, offset)
}

// Get returns the latest offset of key, or -1.
func (m *OffsetMap) Get(key []byte) int64 {
	h := md5.Sum(key)
	p, found := m.slot(&h)
	if !found {
		return -1
	}
	return int64(binary.BigEndian.Uint64(m.buf[p+md5.Size:])) - 1
}
