package kproto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Encoding records and compressing them: what the log cleaner needs to
// rebuild a batch from the records it keeps (and tests to build batches).

// AttrDeleteHorizon is attributes bit 6 (KIP-534): first_timestamp holds
// the delete horizon set by the log cleaner, the time after which the
// batch's tombstones and empty-transaction markers may be dropped.
const AttrDeleteHorizon = 0x40

// DeleteHorizon returns the delete horizon (ms) and whether the batch has
// one.
func (b Batch) DeleteHorizon() (int64, bool) {
	if b.Attributes()&AttrDeleteHorizon == 0 {
		return 0, false
	}
	return b.FirstTimestamp(), true
}

// AppendRecord appends one record, as Records reads it, with its length
// prefix: attributes, timestamp and offset deltas, key, value (nil is
// null), and the headers already encoded (count numHeaders).
func AppendRecord(dst []byte, tsDelta int64, offDelta int32, key, value []byte, numHeaders int32, rawHeaders []byte) []byte {
	var tmp [3 * binary.MaxVarintLen64]byte
	body := 1
	body += binary.PutVarint(tmp[:], tsDelta)
	body += binary.PutVarint(tmp[:], int64(offDelta))
	body += varBytesLen(key) + varBytesLen(value)
	body += binary.PutVarint(tmp[:], int64(numHeaders)) + len(rawHeaders)
	dst = binary.AppendVarint(dst, int64(body))
	dst = append(dst, 0)
	dst = binary.AppendVarint(dst, tsDelta)
	dst = binary.AppendVarint(dst, int64(offDelta))
	dst = appendVarBytes(dst, key)
	dst = appendVarBytes(dst, value)
	dst = binary.AppendVarint(dst, int64(numHeaders))
	return append(dst, rawHeaders...)
}

func varBytesLen(b []byte) int {
	var tmp [binary.MaxVarintLen64]byte
	if b == nil {
		return binary.PutVarint(tmp[:], -1)
	}
	return binary.PutVarint(tmp[:], int64(len(b))) + len(b)
}

func appendVarBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}

// Compress appends src compressed with codec to dst, in the forms
// Decompress reads: gzip, snappy's raw block format (as franz-go and
// librdkafka write it), the LZ4 frame format and zstd.
func Compress(dst []byte, codec int, src []byte) ([]byte, error) {
	switch codec {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		var buf bytes.Buffer
		zw, _ := gzipWriterPool.Get().(*gzip.Writer)
		if zw == nil {
			zw = gzip.NewWriter(&buf)
		} else {
			zw.Reset(&buf)
		}
		defer gzipWriterPool.Put(zw)
		if _, err := zw.Write(src); err != nil {
			return dst, err
		}
		if err := zw.Close(); err != nil {
			return dst, err
		}
		return append(dst, buf.Bytes()...), nil
	case CodecSnappy:
		return append(dst, snappy.Encode(nil, src)...), nil
	case CodecLZ4:
		var buf bytes.Buffer
		lw, _ := lz4WriterPool.Get().(*lz4.Writer)
		if lw == nil {
			lw = lz4.NewWriter(&buf)
		} else {
			lw.Reset(&buf)
		}
		defer lz4WriterPool.Put(lw)
		if _, err := lw.Write(src); err != nil {
			return dst, err
		}
		if err := lw.Close(); err != nil {
			return dst, err
		}
		return append(dst, buf.Bytes()...), nil
	case CodecZstd:
		return zstdEncoder().EncodeAll(src, dst), nil
	}
	return dst, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, codec)
}

var (
	gzipWriterPool sync.Pool
	lz4WriterPool  sync.Pool
	zstdEncoder    = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err) // only invalid options fail
		}
		return e
	})
)

// BatchHeader is the header of a batch to build with AppendBatch.
type BatchHeader struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// HeaderOf returns the header fields of b.
func HeaderOf(b Batch) BatchHeader {
	return BatchHeader{b.BaseOffset(), b.PartitionLeaderEpoch(), b.Attributes(), b.LastOffsetDelta(),
		b.FirstTimestamp(), b.MaxTimestamp(), b.ProducerID(), b.ProducerEpoch(), b.BaseSequence(), b.NumRecords()}
}

// AppendBatch appends a record batch v2 with header h around records (the
// records section as stored: already compressed if h's codec says so),
// with its length and CRC-32C filled in.
func AppendBatch(dst []byte, h BatchHeader, records []byte) []byte {
	start := len(dst)
	be := binary.BigEndian
	dst = be.AppendUint64(dst, uint64(h.BaseOffset))
	dst = be.AppendUint32(dst, uint32(BatchHeaderSize-batchLogOverhead+len(records)))
	dst = be.AppendUint32(dst, uint32(h.PartitionLeaderEpoch))
	dst = append(dst, 2, 0, 0, 0, 0)
	dst = be.AppendUint16(dst, uint16(h.Attributes))
	dst = be.AppendUint32(dst, uint32(h.LastOffsetDelta))
	dst = be.AppendUint64(dst, uint64(h.FirstTimestamp))
	dst = be.AppendUint64(dst, uint64(h.MaxTimestamp))
	dst = be.AppendUint64(dst, uint64(h.ProducerID))
	dst = be.AppendUint16(dst, uint16(h.ProducerEpoch))
	dst = be.AppendUint32(dst, uint32(h.BaseSequence))
	dst = be.AppendUint32(dst, uint32(h.NumRecords))
	dst = append(dst, records...)
	Batch(dst[start:]).SetCRC()
	return dst
}
