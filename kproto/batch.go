package kproto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Record batch v2 (magic 2), the unit producers send and the log stores:
//
//	offset  size  field
//	     0     8  base_offset            (rewritten by the broker)
//	     8     4  batch_length           (bytes after this field)
//	    12     4  partition_leader_epoch (rewritten by the broker; not in CRC)
//	    16     1  magic = 2
//	    17     4  crc                    CRC-32C of bytes [21, end)
//	    21     2  attributes             bits 0-2 codec, 3 timestamp type,
//	                                     4 transactional, 5 control
//	    23     4  last_offset_delta
//	    27     8  first_timestamp
//	    35     8  max_timestamp
//	    43     8  producer_id
//	    51     2  producer_epoch
//	    53     4  base_sequence
//	    57     4  record_count
//	    61     -  records (compressed as a whole when codec != 0)
//
// Legacy message sets (magic 0 and 1) share the first 17 bytes' layout
// (offset, size, crc, magic at byte 16), which is how SplitBatches tells
// them apart.

// Batch is a view over the bytes of one record batch. Accessors read the
// bytes in place; setters write them in place. Accessors other than
// BaseOffset, BatchLength and Magic assume Magic() == 2 and a length of at
// least BatchHeaderSize, which SplitBatches guarantees.
type Batch []byte

// Sizes and offsets of the batch v2 header.
const (
	BatchHeaderSize = 61 // bytes before the first record
	batchLengthOff  = 8
	batchEpochOff   = 12
	batchMagicOff   = 16
	batchCRCOff     = 17
	batchAttrOff    = 21
	batchLODOff     = 23
	batchFirstTSOff = 27
	batchMaxTSOff   = 35
	batchPIDOff     = 43
	batchPEpochOff  = 51
	batchSeqOff     = 53
	batchCountOff   = 57
	// batchLogOverhead is base_offset + batch_length, the bytes that
	// batch_length does not count.
	batchLogOverhead = 12
	// legacyMinSize is the smallest magic 0 message (header, null key,
	// null value).
	legacyMinSize = batchLogOverhead + 14
)

// Compression codecs (attributes bits 0-2).
const (
	CodecNone   = 0
	CodecGzip   = 1
	CodecSnappy = 2
	CodecLZ4    = 3
	CodecZstd   = 4
)

// Attribute bits besides the codec.
const (
	AttrCodecMask     = 0x07
	AttrLogAppendTime = 0x08
	AttrTransactional = 0x10
	AttrControl       = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (b Batch) u16(off int) uint16 { return binary.BigEndian.Uint16(b[off:]) }
func (b Batch) u32(off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }
func (b Batch) u64(off int) uint64 { return binary.BigEndian.Uint64(b[off:]) }

// BaseOffset is the offset of the first record.
func (b Batch) BaseOffset() int64 { return int64(b.u64(0)) }

// BatchLength is the length of the batch after the batch_length field.
func (b Batch) BatchLength() int32 { return int32(b.u32(batchLengthOff)) }

// PartitionLeaderEpoch is the leader epoch the broker stamped.
func (b Batch) PartitionLeaderEpoch() int32 { return int32(b.u32(batchEpochOff)) }

// Magic is the format version: 2 for record batches, 0 or 1 for legacy.
func (b Batch) Magic() int8 { return int8(b[batchMagicOff]) }

// CRC is the stored CRC-32C.
func (b Batch) CRC() uint32 { return b.u32(batchCRCOff) }

// Attributes is the raw attributes field.
func (b Batch) Attributes() int16 { return int16(b.u16(batchAttrOff)) }

// Codec is the compression codec (CodecNone..CodecZstd; other values are
// invalid).
func (b Batch) Codec() int { return int(b.Attributes() & AttrCodecMask) }

// LogAppendTime reports whether timestamps are broker append times.
func (b Batch) LogAppendTime() bool { return b.Attributes()&AttrLogAppendTime != 0 }

// Transactional reports whether the batch is part of a transaction.
func (b Batch) Transactional() bool { return b.Attributes()&AttrTransactional != 0 }

// Control reports whether the batch holds control records (commit/abort).
func (b Batch) Control() bool { return b.Attributes()&AttrControl != 0 }

// LastOffsetDelta is the offset delta of the last record.
func (b Batch) LastOffsetDelta() int32 { return int32(b.u32(batchLODOff)) }

// LastOffset is BaseOffset + LastOffsetDelta.
func (b Batch) LastOffset() int64 { return b.BaseOffset() + int64(b.LastOffsetDelta()) }

// FirstTimestamp is the timestamp record deltas are relative to.
func (b Batch) FirstTimestamp() int64 { return int64(b.u64(batchFirstTSOff)) }

// MaxTimestamp is the largest record timestamp (or the append time).
func (b Batch) MaxTimestamp() int64 { return int64(b.u64(batchMaxTSOff)) }

// ProducerID is the idempotent/transactional producer id, or -1.
func (b Batch) ProducerID() int64 { return int64(b.u64(batchPIDOff)) }

// ProducerEpoch is the producer epoch, or -1.
func (b Batch) ProducerEpoch() int16 { return int16(b.u16(batchPEpochOff)) }

// BaseSequence is the sequence number of the first record, or -1.
func (b Batch) BaseSequence() int32 { return int32(b.u32(batchSeqOff)) }

// NumRecords is the record count from the header.
func (b Batch) NumRecords() int32 { return int32(b.u32(batchCountOff)) }

// RecordsData returns the bytes after the header (compressed if Codec != 0).
func (b Batch) RecordsData() []byte { return b[BatchHeaderSize:] }

// SetBaseOffset rewrites the base offset. The CRC does not cover it.
func (b Batch) SetBaseOffset(off int64) { binary.BigEndian.PutUint64(b, uint64(off)) }

// SetPartitionLeaderEpoch rewrites the leader epoch. The CRC does not cover it.
func (b Batch) SetPartitionLeaderEpoch(epoch int32) {
	binary.BigEndian.PutUint32(b[batchEpochOff:], uint32(epoch))
}

// SetMaxTimestampAndType sets max_timestamp and the timestamp-type bit and
// recomputes the CRC, as Kafka's DefaultRecordBatch.setMaxTimestamp does for
// topics with message.timestamp.type=LogAppendTime. Like Kafka it leaves
// first_timestamp alone: with the bit set, every record's timestamp is
// max_timestamp.
func (b Batch) SetMaxTimestampAndType(ts int64, logAppendTime bool) {
	attr := b.Attributes() &^ AttrLogAppendTime
	if logAppendTime {
		attr |= AttrLogAppendTime
	}
	binary.BigEndian.PutUint16(b[batchAttrOff:], uint16(attr))
	binary.BigEndian.PutUint64(b[batchMaxTSOff:], uint64(ts))
	b.SetCRC()
}

// ComputeCRC returns the CRC-32C of attributes through the end.
func (b Batch) ComputeCRC() uint32 { return crc32.Checksum(b[batchAttrOff:], castagnoli) }

// SetCRC stores ComputeCRC.
func (b Batch) SetCRC() { binary.BigEndian.PutUint32(b[batchCRCOff:], b.ComputeCRC()) }

// VerifyCRC reports whether the stored CRC matches the contents.
func (b Batch) VerifyCRC() bool { return b.CRC() == b.ComputeCRC() }

// Errors from SplitBatches and ValidateBatch; the broker answers
// CORRUPT_MESSAGE for ErrCorruptBatch (and for a bad CRC), and
// UNSUPPORTED_FOR_MESSAGE_FORMAT or INVALID_RECORD for legacy magic as it
// sees fit.
var (
	ErrCorruptBatch  = errors.New("kproto: corrupt record batch")
	ErrInvalidRecord = errors.New("kproto: invalid record")
)

// BatchIter walks the batches of a record set. For a produce request the
// set must consist of whole batches: a truncated tail is an error. Legacy
// entries (magic 0/1) are returned as Batch values with Magic() < 2 and only
// BaseOffset, BatchLength and Magic are meaningful for them.
type BatchIter struct {
	rest []byte
	err  error
}

// SplitBatches returns an iterator over the batches in recordSet.
func SplitBatches(recordSet []byte) BatchIter { return BatchIter{rest: recordSet} }

// Next returns the next batch, or false at the end or on an error (Err).
func (it *BatchIter) Next() (Batch, bool) {
	if it.err != nil || len(it.rest) == 0 {
		return nil, false
	}
	if len(it.rest) < batchMagicOff+1 {
		it.err = fmt.Errorf("%w: %d trailing bytes are too short for a batch header", ErrCorruptBatch, len(it.rest))
		return nil, false
	}
	length := int64(int32(binary.BigEndian.Uint32(it.rest[batchLengthOff:])))
	magic := int8(it.rest[batchMagicOff])
	minLen := int64(BatchHeaderSize - batchLogOverhead)
	if magic < 2 {
		minLen = legacyMinSize - batchLogOverhead
	}
	if length < minLen {
		it.err = fmt.Errorf("%w: batch length %d below the minimum %d", ErrCorruptBatch, length, minLen)
		return nil, false
	}
	total := length + batchLogOverhead
	if total > int64(len(it.rest)) {
		it.err = fmt.Errorf("%w: batch length %d exceeds the %d bytes left", ErrCorruptBatch, length, len(it.rest)-batchLogOverhead)
		return nil, false
	}
	b := Batch(it.rest[:total:total])
	it.rest = it.rest[total:]
	return b, true
}

// Err returns the error that stopped the iteration, or nil.
func (it *BatchIter) Err() error { return it.err }
