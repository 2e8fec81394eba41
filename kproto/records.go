package kproto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Records inside a batch (magic 2). Each record is:
//
//	length varint | attributes int8 | timestamp_delta varlong |
//	offset_delta varint | key_len varint | key | value_len varint | value |
//	header_count varint | [hkey_len varint | hkey | hvalue_len varint | hvalue]
//
// A length of -1 means null (key, value, header value). When the batch is
// compressed, the whole records section is compressed with the codec from
// the attributes; the broker decompresses only to validate.

// DefaultMaxDecompressedBytes caps how large a batch may grow when
// decompressed for validation.
const DefaultMaxDecompressedBytes = 256 << 20

// Record is one record; Key, Value and RawHeaders alias the batch (or the
// decompression scratch buffer).
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte // nil when null
	Value          []byte // nil when null
	NumHeaders     int32
	RawHeaders     []byte // encoded headers, see Headers
}

// RecordHeader is one record header.
type RecordHeader struct {
	Key   []byte
	Value []byte // nil when null
}

// Headers appends the record's decoded headers to dst.
func (r *Record) Headers(dst []RecordHeader) ([]RecordHeader, error) {
	b := Reader{Src: r.RawHeaders}
	for i := int32(0); i < r.NumHeaders; i++ {
		k := b.Span(int(b.Varint()))
		v := varBytes(&b)
		if !b.Ok() {
			break
		}
		dst = append(dst, RecordHeader{Key: k, Value: v})
	}
	if err := b.Complete(); err != nil {
		return dst, fmt.Errorf("%w: headers: %v", ErrInvalidRecord, err)
	}
	return dst, nil
}

// varBytes reads varint-length bytes; -1 is null (nil).
func varBytes(b *Reader) []byte {
	n := b.Varint()
	if n < 0 {
		if n != -1 {
			b.Fail()
		}
		return nil
	}
	return b.Span(int(n))
}

// RecordIter walks the records of one batch.
type RecordIter struct {
	data    []byte
	left    int32
	err     error
	scratch []byte
}

// Records returns an iterator over b's records, decompressing into scratch
// (grown as needed, up to DefaultMaxDecompressedBytes) when the batch is
// compressed. An uncompressed batch is read in place: no record bytes are
// copied. Scratch returns the buffer for reuse.
func Records(b Batch, scratch []byte) (RecordIter, error) {
	return RecordsLimit(b, scratch, DefaultMaxDecompressedBytes)
}

// RecordsLimit is Records with an explicit decompressed size limit.
func RecordsLimit(b Batch, scratch []byte, maxSize int) (RecordIter, error) {
	it := RecordIter{scratch: scratch}
	if len(b) < BatchHeaderSize || b.Magic() != 2 {
		return it, fmt.Errorf("%w: not a magic 2 batch", ErrCorruptBatch)
	}
	it.left = b.NumRecords()
	if it.left < 0 {
		return it, fmt.Errorf("%w: negative record count %d", ErrCorruptBatch, it.left)
	}
	codec := b.Codec()
	if codec == CodecNone {
		it.data = b.RecordsData()
		return it, nil
	}
	out, err := Decompress(scratch[:0], codec, b.RecordsData(), maxSize)
	it.scratch = out
	if err != nil {
		return it, err
	}
	it.data = out
	return it, nil
}

// Scratch returns the (possibly grown) scratch buffer.
func (it *RecordIter) Scratch() []byte { return it.scratch }

// Next returns the next record. It returns false after NumRecords records or
// on an error (see Err).
func (it *RecordIter) Next() (Record, bool) {
	if it.err != nil || it.left <= 0 {
		return Record{}, false
	}
	it.left--
	b := Reader{Src: it.data}
	length := b.Varint()
	if !b.Ok() || length < 0 || int(length) > len(b.Src) {
		it.err = fmt.Errorf("%w: bad record length", ErrInvalidRecord)
		return Record{}, false
	}
	body := b.Src[:length]
	it.data = b.Src[length:]
	rb := Reader{Src: body}
	var r Record
	r.Attributes = rb.Int8()
	r.TimestampDelta = rb.Varlong()
	r.OffsetDelta = rb.Varint()
	r.Key = varBytes(&rb)
	r.Value = varBytes(&rb)
	r.NumHeaders = rb.Varint()
	if r.NumHeaders < 0 || int(r.NumHeaders) > len(rb.Src)/2 {
		rb.Fail()
	}
	r.RawHeaders = rb.Src
	if !rb.Ok() {
		it.err = fmt.Errorf("%w: truncated record", ErrInvalidRecord)
		return Record{}, false
	}
	return r, true
}

// Err returns the error that stopped the iteration, or nil.
func (it *RecordIter) Err() error { return it.err }

// Rest returns undecoded bytes after the last record returned.
func (it *RecordIter) Rest() []byte { return it.data }

// ValidateBatch checks a magic 2 batch the way Kafka's LogValidator does
// before appending: the CRC, a known codec, a positive record count equal to
// last_offset_delta+1 and to the number of records actually present, record
// offset deltas 0, 1, 2, ..., and well-formed records and headers. It
// returns the scratch buffer (grown by decompression) for reuse. Errors wrap
// ErrCorruptBatch (answer CORRUPT_MESSAGE) or ErrInvalidRecord (answer
// INVALID_RECORD, or CORRUPT_MESSAGE for clients older than v8).
func ValidateBatch(b Batch, scratch []byte) ([]byte, error) {
	return ValidateBatchLimit(b, scratch, DefaultMaxDecompressedBytes)
}

// ValidateBatchLimit is ValidateBatch with an explicit decompressed size limit.
func ValidateBatchLimit(b Batch, scratch []byte, maxSize int) ([]byte, error) {
	if len(b) < BatchHeaderSize || b.Magic() != 2 {
		return scratch, fmt.Errorf("%w: not a magic 2 batch", ErrCorruptBatch)
	}
	if !b.VerifyCRC() {
		return scratch, fmt.Errorf("%w: CRC mismatch (stored %#x, computed %#x)", ErrCorruptBatch, b.CRC(), b.ComputeCRC())
	}
	if b.Codec() > CodecZstd {
		return scratch, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, b.Codec())
	}
	n := b.NumRecords()
	if n <= 0 {
		return scratch, fmt.Errorf("%w: invalid record count %d", ErrInvalidRecord, n)
	}
	if int64(b.LastOffsetDelta())+1 != int64(n) {
		return scratch, fmt.Errorf("%w: last offset delta %d does not match record count %d", ErrInvalidRecord, b.LastOffsetDelta(), n)
	}
	data := b.RecordsData()
	if codec := b.Codec(); codec != CodecNone {
		out, err := Decompress(scratch[:0], codec, data, maxSize)
		scratch = out
		if err != nil {
			return scratch, err
		}
		data = out
	}
	return scratch, validateRecords(data, n)
}

// validateRecords checks that data holds exactly n well-formed records
// (the records section of a batch, decompressed) with offset deltas 0, 1,
// ..., n-1. It accepts and rejects exactly what walking the records with
// RecordIter.Next, checking each OffsetDelta and skipHeaders does (the
// reference in the tests), but reads each field's varint in place without
// building Record values: lengths, the offset delta and the header count
// are decoded, the other fields are skipped.
func validateRecords(data []byte, n int32) error {
	for i := int32(0); i < n; i++ {
		length, k := varint32(data)
		if k <= 0 || length < 0 || int(length) > len(data)-k {
			return fmt.Errorf("%w: bad record length", ErrInvalidRecord)
		}
		body := data[k : k+int(length)]
		data = data[k+int(length):]
		od, ok := recordOffsetDelta(body)
		if !ok {
			return fmt.Errorf("%w: truncated record", ErrInvalidRecord)
		}
		if od != i {
			return fmt.Errorf("%w: record %d has offset delta %d", ErrInvalidRecord, i, od)
		}
	}
	if len(data) != 0 {
		return fmt.Errorf("%w: header says %d records, found %d and %d extra bytes", ErrInvalidRecord, n, n, len(data))
	}
	return nil
}

// recordOffsetDelta checks one record body (after its length) and returns
// its offset delta; ok is false where RecordIter.Next or skipHeaders fail.
// A header error is reported as not ok too: both are ErrInvalidRecord.
func recordOffsetDelta(b []byte) (od int32, ok bool) {
	// attributes int8
	if len(b) < 1 {
		return 0, false
	}
	b = b[1:]
	// timestamp_delta varlong
	if len(b) > 0 && b[0] < 0x80 {
		b = b[1:]
	} else {
		_, k := binary.Varint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
	}
	od, k := varint32(b)
	if k <= 0 {
		return 0, false
	}
	b = b[k:]
	if b, ok = skipVarBytes(b); !ok { // key
		return 0, false
	}
	if b, ok = skipVarBytes(b); !ok { // value
		return 0, false
	}
	nh, k := varint32(b)
	if k <= 0 {
		return 0, false
	}
	b = b[k:]
	if nh < 0 || int(nh) > len(b)/2 {
		return 0, false
	}
	for range nh {
		// header key: not nullable
		kl, k := varint32(b)
		if k <= 0 || kl < 0 || int(kl) > len(b)-k {
			return 0, false
		}
		b = b[k+int(kl):]
		if b, ok = skipVarBytes(b); !ok { // header value
			return 0, false
		}
	}
	return od, len(b) == 0
}

// skipVarBytes skips varint-length bytes (-1 is null), as varBytes reads them.
func skipVarBytes(b []byte) ([]byte, bool) {
	n, k := varint32(b)
	switch {
	case k <= 0 || n < -1:
		return nil, false
	case n == -1:
		return b[k:], true
	case int(n) > len(b)-k:
		return nil, false
	}
	return b[k+int(n):], true
}

// varint32 decodes a zig-zag varint as Reader.Varint does: k <= 0 where
// Reader.Varint fails (short input, more than 5 bytes, outside int32).
func varint32(b []byte) (v int32, k int) {
	if len(b) > 0 && b[0] < 0x80 {
		u := uint32(b[0])
		return int32(u>>1) ^ -int32(u&1), 1
	}
	x, k := binary.Varint(b)
	if k <= 0 || k > 5 || x < math.MinInt32 || x > math.MaxInt32 {
		return 0, 0
	}
	return int32(x), k
}

// Decompress appends the decompression of src with codec to dst, failing if
// the output would exceed maxSize bytes. Snappy accepts both the raw block
// format (librdkafka, franz-go, sarama) and Xerial framing (Java clients).
// LZ4 is the standard frame format (magic 2 batches).
func Decompress(dst []byte, codec int, src []byte, maxSize int) ([]byte, error) {
	switch codec {
	case CodecGzip:
		zr, _ := gzipPool.Get().(*gzip.Reader)
		if zr == nil {
			zr = new(gzip.Reader)
		}
		defer gzipPool.Put(zr)
		if err := zr.Reset(bytes.NewReader(src)); err != nil {
			return dst, fmt.Errorf("%w: gzip: %v", ErrCorruptBatch, err)
		}
		return readAllLimit(dst, zr, maxSize, "gzip")
	case CodecSnappy:
		return decodeSnappy(dst, src, maxSize)
	case CodecLZ4:
		lr, _ := lz4Pool.Get().(*lz4.Reader)
		if lr == nil {
			lr = lz4.NewReader(nil)
		}
		defer lz4Pool.Put(lr)
		lr.Reset(bytes.NewReader(src))
		return readAllLimit(dst, lr, maxSize, "lz4")
	case CodecZstd:
		// Refuse a declared content size over the limit before DecodeAll
		// allocates it.
		var h zstd.Header
		if err := h.Decode(src); err == nil && h.HasFCS && h.FrameContentSize > uint64(maxSize) {
			return dst, fmt.Errorf("%w: zstd: decompressed size above %d", ErrCorruptBatch, maxSize)
		}
		out, err := zstdDecoder().DecodeAll(src, dst)
		if err != nil {
			return dst, fmt.Errorf("%w: zstd: %v", ErrCorruptBatch, err)
		}
		if len(out)-len(dst) > maxSize {
			return dst, fmt.Errorf("%w: zstd: decompressed size above %d", ErrCorruptBatch, maxSize)
		}
		return out, nil
	}
	return dst, fmt.Errorf("%w: unknown compression codec %d", ErrCorruptBatch, codec)
}

var (
	gzipPool    sync.Pool
	lz4Pool     sync.Pool
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(DefaultMaxDecompressedBytes))
		if err != nil {
			panic(err) // only invalid options fail
		}
		return d
	})
)

// readAllLimit appends everything r yields to dst, up to maxSize bytes.
func readAllLimit(dst []byte, r io.Reader, maxSize int, what string) ([]byte, error) {
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > maxSize {
			return dst[:start], fmt.Errorf("%w: %s: decompressed size above %d", ErrCorruptBatch, what, maxSize)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst[:start], fmt.Errorf("%w: %s: %v", ErrCorruptBatch, what, err)
		}
	}
}

// xerialHeader starts Xerial-framed snappy: magic, then version and
// compatible-version int32s, then chunks of int32 length + raw snappy block.
var xerialHeader = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

func decodeSnappy(dst, src []byte, maxSize int) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialHeader) {
		return decodeSnappyBlock(dst, src, maxSize, len(dst))
	}
	start := len(dst)
	if len(src) < 16 {
		return dst, fmt.Errorf("%w: snappy: short xerial header", ErrCorruptBatch)
	}
	src = src[16:]
	for len(src) > 0 {
		if len(src) < 4 {
			return dst[:start], fmt.Errorf("%w: snappy: truncated xerial chunk", ErrCorruptBatch)
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return dst[:start], fmt.Errorf("%w: snappy: xerial chunk of %d bytes exceeds %d left", ErrCorruptBatch, n, len(src))
		}
		var err error
		if dst, err = decodeSnappyBlock(dst, src[:n], maxSize, start); err != nil {
			return dst[:start], err
		}
		src = src[n:]
	}
	return dst, nil
}

// decodeSnappyBlock appends one raw snappy block; start is where this
// decompression's output began, for the size limit.
func decodeSnappyBlock(dst, src []byte, maxSize, start int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, fmt.Errorf("%w: snappy: %v", ErrCorruptBatch, err)
	}
	if len(dst)-start+n > maxSize {
		return dst, fmt.Errorf("%w: snappy: decompressed size above %d", ErrCorruptBatch, maxSize)
	}
	at := len(dst)
	dst = grow(dst, n)
	if _, err := snappy.Decode(dst[at:at+n], src); err != nil {
		return dst[:at], fmt.Errorf("%w: snappy: %v", ErrCorruptBatch, err)
	}
	return dst, nil
}

// grow extends dst by n bytes (contents of the new bytes unspecified).
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	nb := make([]byte, len(dst)+n, max(2*cap(dst), len(dst)+n))
	copy(nb, dst)
	return nb
}
