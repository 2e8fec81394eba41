package kproto

import (
	"encoding/binary"
	"errors"
	"math"
)

// Wire primitives. Encoders are append-style (AppendX(dst, v) []byte) and
// never fail. Decoding goes through Reader, whose error is sticky: once a
// read runs past the end of Src (or a length is invalid) every later read
// returns a zero value and Complete reports the failure once.

// ErrNotEnoughData is returned by Reader.Complete when a read ran past the
// end of the input or met an invalid length.
var ErrNotEnoughData = errors.New("kproto: message truncated or has an invalid length")

// ErrTrailingBytes is returned by Reader.Complete when bytes remain after the
// message was fully decoded.
var ErrTrailingBytes = errors.New("kproto: trailing bytes after message")

// AppendBool appends 1 for true and 0 for false.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendInt8 appends one byte.
func AppendInt8(dst []byte, v int8) []byte { return append(dst, byte(v)) }

// AppendInt16 appends a big-endian int16.
func AppendInt16(dst []byte, v int16) []byte { return binary.BigEndian.AppendUint16(dst, uint16(v)) }

// AppendInt32 appends a big-endian int32.
func AppendInt32(dst []byte, v int32) []byte { return binary.BigEndian.AppendUint32(dst, uint32(v)) }

// AppendUint32 appends a big-endian uint32.
func AppendUint32(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }

// AppendInt64 appends a big-endian int64.
func AppendInt64(dst []byte, v int64) []byte { return binary.BigEndian.AppendUint64(dst, uint64(v)) }

// AppendUUID appends 16 raw bytes (Kafka's uuid type, used for topic ids).
func AppendUUID(dst []byte, v [16]byte) []byte { return append(dst, v[:]...) }

// AppendUvarint appends an unsigned varint (used for compact lengths and tags).
func AppendUvarint(dst []byte, v uint32) []byte { return binary.AppendUvarint(dst, uint64(v)) }

// AppendVarint appends a zig-zag varint (record fields).
func AppendVarint(dst []byte, v int32) []byte { return binary.AppendVarint(dst, int64(v)) }

// AppendVarlong appends a zig-zag varint of 64 bits (record timestamp delta).
func AppendVarlong(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

// AppendString appends a string with an int16 length.
func AppendString(dst []byte, s string) []byte {
	dst = AppendInt16(dst, int16(len(s)))
	return append(dst, s...)
}

// AppendCompactString appends a string with a uvarint length+1.
func AppendCompactString(dst []byte, s string) []byte {
	dst = AppendUvarint(dst, uint32(len(s))+1)
	return append(dst, s...)
}

// AppendNullableString appends a string with an int16 length; nil is length -1.
func AppendNullableString(dst []byte, s *string) []byte {
	if s == nil {
		return AppendInt16(dst, -1)
	}
	return AppendString(dst, *s)
}

// AppendCompactNullableString appends a compact string; nil is length 0 (null).
func AppendCompactNullableString(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, 0)
	}
	return AppendCompactString(dst, *s)
}

// AppendBytes appends bytes with an int32 length.
func AppendBytes(dst, b []byte) []byte {
	dst = AppendInt32(dst, int32(len(b)))
	return append(dst, b...)
}

// AppendCompactBytes appends bytes with a uvarint length+1.
func AppendCompactBytes(dst, b []byte) []byte {
	dst = AppendUvarint(dst, uint32(len(b))+1)
	return append(dst, b...)
}

// AppendNullableBytes appends bytes with an int32 length; nil is length -1.
func AppendNullableBytes(dst, b []byte) []byte {
	if b == nil {
		return AppendInt32(dst, -1)
	}
	return AppendBytes(dst, b)
}

// AppendCompactNullableBytes appends compact bytes; nil is length 0 (null).
func AppendCompactNullableBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, 0)
	}
	return AppendCompactBytes(dst, b)
}

// The AppendFlexX helpers pick the classic or the compact form of a field:
// flexible is true for the message versions that use KIP-482 encoding.

// AppendFlexString appends s as a string or a compact string.
func AppendFlexString(dst []byte, s string, flexible bool) []byte {
	if flexible {
		return AppendCompactString(dst, s)
	}
	return AppendString(dst, s)
}

// AppendFlexNullableString appends s as a nullable or compact nullable string.
func AppendFlexNullableString(dst []byte, s *string, flexible bool) []byte {
	if flexible {
		return AppendCompactNullableString(dst, s)
	}
	return AppendNullableString(dst, s)
}

// AppendFlexNullableBytes appends b as nullable bytes or compact nullable bytes.
func AppendFlexNullableBytes(dst, b []byte, flexible bool) []byte {
	if flexible {
		return AppendCompactNullableBytes(dst, b)
	}
	return AppendNullableBytes(dst, b)
}

// AppendBytesLen appends only the length prefix of a non-null bytes field of
// n bytes, for callers that write the n bytes themselves (sendfile).
func AppendBytesLen(dst []byte, n int, flexible bool) []byte {
	if flexible {
		return AppendUvarint(dst, uint32(n)+1)
	}
	return AppendInt32(dst, int32(n))
}

// AppendArrayLen appends an array length: int32, or uvarint n+1 when flexible.
func AppendArrayLen(dst []byte, n int, flexible bool) []byte {
	if flexible {
		return AppendUvarint(dst, uint32(n)+1)
	}
	return AppendInt32(dst, int32(n))
}

// AppendNullableArrayLen appends an array length, or null (-1, or 0 when
// flexible) if null is set.
func AppendNullableArrayLen(dst []byte, n int, null, flexible bool) []byte {
	if null {
		if flexible {
			return append(dst, 0)
		}
		return AppendInt32(dst, -1)
	}
	return AppendArrayLen(dst, n, flexible)
}

// RawTags is a KIP-482 tagged-field section exactly as it appears on the wire:
// a uvarint count, then per field a uvarint tag, a uvarint size and the
// value. A nil or empty RawTags encodes as an empty section (a single 0).
// Decoders keep the section as a subslice of the input so that messages
// re-encode byte for byte and no allocation happens for unknown tags.
type RawTags []byte

// AppendTags appends a tagged-field section; nil appends an empty one.
func AppendTags(dst []byte, t RawTags) []byte {
	if len(t) == 0 {
		return append(dst, 0)
	}
	return append(dst, t...)
}

// AppendTag appends one tagged field (tag, size, value) to dst. The caller
// writes the count first with AppendUvarint and fields in increasing tag order.
func AppendTag(dst []byte, tag uint32, value []byte) []byte {
	dst = AppendUvarint(dst, tag)
	dst = AppendUvarint(dst, uint32(len(value)))
	return append(dst, value...)
}

// Each calls fn for every field of the section, stopping at the first
// malformed field. The section must come from Reader.Tags or be well formed.
func (t RawTags) Each(fn func(tag uint32, value []byte)) {
	r := Reader{Src: t}
	n := r.Uvarint()
	for i := uint32(0); i < n && r.Ok(); i++ {
		tag := r.Uvarint()
		v := r.Span(int(r.Uvarint()))
		if r.Ok() {
			fn(tag, v)
		}
	}
}

// Reader decodes Kafka primitives from Src, advancing Src. The first failed
// read marks the Reader bad; later reads return zero values. Callers check
// once, with Ok or Complete, before trusting anything they read.
type Reader struct {
	Src []byte
	bad bool
}

// emptyBytes is returned for present-but-empty byte fields so that callers
// can tell them from null (nil) ones.
var emptyBytes = []byte{}

// Ok reports whether every read so far succeeded.
func (r *Reader) Ok() bool { return !r.bad }

// Fail marks the reader bad, for validation errors found by the caller.
func (r *Reader) Fail() {
	r.bad = true
	r.Src = nil
}

// Complete returns ErrNotEnoughData if any read failed and ErrTrailingBytes
// if input remains.
func (r *Reader) Complete() error {
	if r.bad {
		return ErrNotEnoughData
	}
	if len(r.Src) != 0 {
		return ErrTrailingBytes
	}
	return nil
}

// Span returns the next n bytes as a subslice of Src (capacity clipped, so an
// append by the caller cannot overwrite what follows). n < 0 or n beyond the
// input fails the reader.
func (r *Reader) Span(n int) []byte {
	if n < 0 || n > len(r.Src) {
		r.Fail()
		return nil
	}
	s := r.Src[:n:n]
	r.Src = r.Src[n:]
	if n == 0 {
		return emptyBytes
	}
	return s
}

// Bool reads one byte; non-zero is true.
func (r *Reader) Bool() bool { return r.Int8() != 0 }

// Int8 reads one byte.
func (r *Reader) Int8() int8 {
	if len(r.Src) < 1 {
		r.Fail()
		return 0
	}
	v := int8(r.Src[0])
	r.Src = r.Src[1:]
	return v
}

// Int16 reads a big-endian int16.
func (r *Reader) Int16() int16 {
	if len(r.Src) < 2 {
		r.Fail()
		return 0
	}
	v := int16(binary.BigEndian.Uint16(r.Src))
	r.Src = r.Src[2:]
	return v
}

// Int32 reads a big-endian int32.
func (r *Reader) Int32() int32 {
	if len(r.Src) < 4 {
		r.Fail()
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.Src))
	r.Src = r.Src[4:]
	return v
}

// Int64 reads a big-endian int64.
func (r *Reader) Int64() int64 {
	if len(r.Src) < 8 {
		r.Fail()
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.Src))
	r.Src = r.Src[8:]
	return v
}

// UUID reads 16 raw bytes.
func (r *Reader) UUID() (v [16]byte) {
	copy(v[:], r.Span(16))
	return v
}

// Uvarint reads an unsigned varint that must fit in 32 bits.
func (r *Reader) Uvarint() uint32 {
	if len(r.Src) > 0 && r.Src[0] < 0x80 {
		v := r.Src[0]
		r.Src = r.Src[1:]
		return uint32(v)
	}
	v, n := binary.Uvarint(r.Src)
	if n <= 0 || n > 5 || v > math.MaxUint32 {
		r.Fail()
		return 0
	}
	r.Src = r.Src[n:]
	return uint32(v)
}

// Varint reads a zig-zag varint that must fit in 32 bits.
func (r *Reader) Varint() int32 {
	v, n := binary.Varint(r.Src)
	if n <= 0 || n > 5 || v < math.MinInt32 || v > math.MaxInt32 {
		r.Fail()
		return 0
	}
	r.Src = r.Src[n:]
	return int32(v)
}

// Varlong reads a zig-zag varint of up to 64 bits.
func (r *Reader) Varlong() int64 {
	v, n := binary.Varint(r.Src)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.Src = r.Src[n:]
	return v
}

// compactLen reads a uvarint length+1; it returns -1 for null (0 on the wire).
func (r *Reader) compactLen() int {
	return int(r.Uvarint()) - 1
}

// String reads an int16-length string (null is invalid).
func (r *Reader) String() string { return string(r.Span(int(r.Int16()))) }

// CompactString reads a compact string (null is invalid).
func (r *Reader) CompactString() string { return string(r.Span(r.compactLen())) }

// NullableString reads an int16-length string; length -1 returns nil.
func (r *Reader) NullableString() *string {
	n := int(r.Int16())
	if n < 0 || r.bad {
		return nil
	}
	s := string(r.Span(n))
	return &s
}

// CompactNullableString reads a compact string; 0 on the wire returns nil.
func (r *Reader) CompactNullableString() *string {
	n := r.compactLen()
	if n < 0 || r.bad {
		return nil
	}
	s := string(r.Span(n))
	return &s
}

// Bytes reads int32-length bytes (null is invalid) as a subslice of Src.
func (r *Reader) Bytes() []byte { return r.Span(int(r.Int32())) }

// CompactBytes reads compact bytes (null is invalid) as a subslice of Src.
func (r *Reader) CompactBytes() []byte { return r.Span(r.compactLen()) }

// NullableBytes reads int32-length bytes as a subslice; -1 returns nil.
func (r *Reader) NullableBytes() []byte {
	n := int(r.Int32())
	if n < 0 && n != -1 {
		r.Fail()
	}
	if n < 0 || r.bad {
		return nil
	}
	return r.Span(n)
}

// CompactNullableBytes reads compact bytes as a subslice; null returns nil.
func (r *Reader) CompactNullableBytes() []byte {
	n := r.compactLen()
	if n < 0 || r.bad {
		return nil
	}
	return r.Span(n)
}

// FlexString reads a string or, when flexible, a compact string.
func (r *Reader) FlexString(flexible bool) string {
	if flexible {
		return r.CompactString()
	}
	return r.String()
}

// FlexNullableString reads a nullable string in the classic or compact form.
func (r *Reader) FlexNullableString(flexible bool) *string {
	if flexible {
		return r.CompactNullableString()
	}
	return r.NullableString()
}

// FlexNullableBytes reads nullable bytes in the classic or compact form.
func (r *Reader) FlexNullableBytes(flexible bool) []byte {
	if flexible {
		return r.CompactNullableBytes()
	}
	return r.NullableBytes()
}

// ArrayLen reads a non-null array length (int32, or uvarint n+1 when
// flexible). minElem is the smallest encoded size of one element; a length
// whose elements cannot fit in the remaining input fails the reader, so the
// caller may allocate n elements safely.
func (r *Reader) ArrayLen(flexible bool, minElem int) int {
	n := r.NullableArrayLen(flexible, minElem)
	if n < 0 {
		r.Fail()
		return 0
	}
	return n
}

// NullableArrayLen is ArrayLen that returns -1 for a null array.
func (r *Reader) NullableArrayLen(flexible bool, minElem int) int {
	var n int
	if flexible {
		n = r.compactLen()
	} else {
		n = int(r.Int32())
	}
	if r.bad {
		return 0
	}
	if n < -1 || (n > 0 && minElem > 0 && n > len(r.Src)/minElem) {
		r.Fail()
		return 0
	}
	return n
}

// Tags reads a tagged-field section and returns it raw (see RawTags).
func (r *Reader) Tags() RawTags {
	start := r.Src
	n := r.Uvarint()
	if uint64(n)*2 > uint64(len(r.Src)) {
		r.Fail()
		return nil
	}
	for i := uint32(0); i < n; i++ {
		r.Uvarint()
		r.Span(int(r.Uvarint()))
	}
	if r.bad {
		return nil
	}
	used := len(start) - len(r.Src)
	if used == 1 {
		return nil // the canonical empty section, re-encoded by AppendTags
	}
	return RawTags(start[:used:used])
}

// FlexTags reads a tagged-field section when flexible, and nothing otherwise.
func (r *Reader) FlexTags(flexible bool) RawTags {
	if !flexible {
		return nil
	}
	return r.Tags()
}

// appendFlexTags appends a tag section when flexible.
func appendFlexTags(dst []byte, t RawTags, flexible bool) []byte {
	if !flexible {
		return dst
	}
	return AppendTags(dst, t)
}
