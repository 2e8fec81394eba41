package segment

import (
	"encoding/binary"
	"hash/crc32"
)

// Layout of the record batch v2 header. All fields are big-endian.
const (
	offBaseOffset      = 0  // int64, written by the log
	offBatchLength     = 8  // int32, bytes after this field
	offLeaderEpoch     = 12 // int32
	offMagic           = 16 // int8, always 2
	offCRC             = 17 // uint32, CRC-32C over offAttributes..end
	offAttributes      = 21 // int16
	offLastOffsetDelta = 23 // int32
	offFirstTimestamp  = 27 // int64
	offMaxTimestamp    = 35 // int64
	offProducerID      = 43 // int64
	offProducerEpoch   = 51 // int16
	offBaseSequence    = 53 // int32
	offRecordCount     = 57 // int32

	// HeaderSize is the size of a record batch v2 header; the payload follows it.
	HeaderSize = 61
	// logOverhead is the part of the header that batchLength does not count.
	logOverhead = offLeaderEpoch
	// batchMagic is the only record batch version the log accepts.
	batchMagic = 2
	// attrControl is the attributes bit of a transaction marker batch.
	attrControl = 0x20
	// maxBatchSize bounds batchLength when recovering, so a corrupt length
	// can never make the log read or skip past int32 positions.
	maxBatchSize = 1<<31 - 1 - logOverhead
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendBatch appends to dst a minimal valid record batch v2 around an
// opaque payload and returns the extended slice. The batch claims count
// offsets (lastOffsetDelta = count-1) and maxTimestamp as both its first and
// max timestamp; attributes are 0, producerId -1, producerEpoch -1,
// baseSequence -1, recordCount count, and the CRC-32C is filled in. The base
// offset is left 0: Log.Append assigns it. count must be at least 1.
func AppendBatch(dst, payload []byte, count int32, maxTimestamp int64) []byte {
	start := len(dst)
	var h [HeaderSize]byte
	be := binary.BigEndian
	be.PutUint32(h[offBatchLength:], uint32(HeaderSize-logOverhead+len(payload)))
	be.PutUint32(h[offLeaderEpoch:], ^uint32(0))
	h[offMagic] = batchMagic
	be.PutUint32(h[offLastOffsetDelta:], uint32(count-1))
	be.PutUint64(h[offFirstTimestamp:], uint64(maxTimestamp))
	be.PutUint64(h[offMaxTimestamp:], uint64(maxTimestamp))
	be.PutUint64(h[offProducerID:], ^uint64(0))
	be.PutUint16(h[offProducerEpoch:], ^uint16(0))
	be.PutUint32(h[offBaseSequence:], ^uint32(0))
	be.PutUint32(h[offRecordCount:], uint32(count))
	dst = append(dst, h[:]...)
	dst = append(dst, payload...)
	b := dst[start:]
	be.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
	return dst
}

// Payload returns the bytes that follow the 61-byte header of batch (for a
// batch built by AppendBatch, the payload it was given). It aliases batch.
// It returns nil if batch is shorter than a header.
func Payload(batch []byte) []byte {
	if len(batch) < HeaderSize {
		return nil
	}
	return batch[HeaderSize:]
}

// BatchBaseOffset returns the base offset stored in a batch header.
// It panics if h is shorter than 8 bytes, like binary.BigEndian.
func BatchBaseOffset(h []byte) int64 { return int64(binary.BigEndian.Uint64(h[offBaseOffset:])) }

// batchSize returns the full size of the batch whose header starts h:
// batchLength plus the 12 bytes before it.
func batchSize(h []byte) int64 {
	return int64(int32(binary.BigEndian.Uint32(h[offBatchLength:]))) + logOverhead
}

// batchLastOffsetDelta returns lastOffsetDelta from a header.
func batchLastOffsetDelta(h []byte) int32 {
	return int32(binary.BigEndian.Uint32(h[offLastOffsetDelta:]))
}

// batchMaxTimestamp returns maxTimestamp from a header.
func batchMaxTimestamp(h []byte) int64 { return int64(binary.BigEndian.Uint64(h[offMaxTimestamp:])) }

// checkHeader checks what recovery checks of a header before the CRC: a
// length that can hold a header and does not overflow, and magic 2. It
// returns a reason, or "" if the header is sane.
func checkHeader(h []byte) string {
	n := int32(binary.BigEndian.Uint32(h[offBatchLength:]))
	switch {
	case n < HeaderSize-logOverhead || int64(n) > maxBatchSize:
		return "bad batch length"
	case h[offMagic] != batchMagic:
		return "bad magic"
	}
	return ""
}

// checkCRC reports whether the CRC-32C in the header of a complete batch
// matches its contents.
func checkCRC(batch []byte) bool {
	return binary.BigEndian.Uint32(batch[offCRC:]) == crc32.Checksum(batch[offAttributes:], castagnoli)
}

// validateAppend checks the contract of Log.Append: a whole batch whose
// batchLength matches its size, magic 2, and whose header agrees with count
// and maxTimestamp (recovery rebuilds the indexes from the header).
// It does not check the CRC: the caller (the broker) does that once.
func validateAppend(batch []byte, count int32, maxTimestamp int64) error {
	if len(batch) < HeaderSize {
		return errInvalid("batch shorter than the 61-byte header")
	}
	if batchSize(batch) != int64(len(batch)) {
		return errInvalid("batchLength+12 != len(batch)")
	}
	if batch[offMagic] != batchMagic {
		return errInvalid("magic is not 2")
	}
	if count < 1 || batchLastOffsetDelta(batch) != count-1 {
		return errInvalid("count does not match lastOffsetDelta+1")
	}
	if batchMaxTimestamp(batch) != maxTimestamp {
		return errInvalid("maxTimestamp does not match the header")
	}
	return nil
}
