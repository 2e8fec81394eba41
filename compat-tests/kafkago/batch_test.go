package kafkago

import (
	"encoding/binary"
	"hash/crc32"
	"time"
)

// buildBatch encodes an uncompressed record batch v2 by hand.
func buildBatch(pid int64, epoch int16, seq int32, ts int64, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		var r []byte
		r = append(r, 0)                          // attributes
		r = binary.AppendVarint(r, 0)             // timestamp delta
		r = binary.AppendVarint(r, int64(i))      // offset delta
		r = binary.AppendVarint(r, -1)            // null key
		r = binary.AppendVarint(r, int64(len(v))) // value
		r = append(r, v...)
		r = binary.AppendVarint(r, 0) // no headers
		recs = binary.AppendVarint(recs, int64(len(r)))
		recs = append(recs, r...)
	}
	b := make([]byte, 61, 61+len(recs))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(recs)))
	b[16] = 2
	binary.BigEndian.PutUint32(b[23:], uint32(len(values)-1))
	binary.BigEndian.PutUint64(b[27:], uint64(ts))
	binary.BigEndian.PutUint64(b[35:], uint64(ts))
	binary.BigEndian.PutUint64(b[43:], uint64(pid))
	binary.BigEndian.PutUint16(b[51:], uint16(epoch))
	binary.BigEndian.PutUint32(b[53:], uint32(seq))
	binary.BigEndian.PutUint32(b[57:], uint32(len(values)))
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func nowMs() int64 { return time.Now().UnixMilli() }
