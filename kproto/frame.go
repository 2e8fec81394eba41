package kproto

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxRequestBytes is Kafka's socket.request.max.bytes default (100 MiB).
const DefaultMaxRequestBytes = 100 << 20

// FrameSizeError reports a request whose size prefix is negative or above the
// limit. Nothing of the oversize request was read or allocated; the
// connection must be closed (Kafka does the same).
type FrameSizeError struct {
	Size int32 // the size prefix as sent
	Max  int   // the limit in force
}

func (e *FrameSizeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("kproto: invalid negative request size %d", e.Size)
	}
	return fmt.Sprintf("kproto: request size %d is larger than the limit %d (socket.request.max.bytes)", e.Size, e.Max)
}

// frameGrowStep is the least a frame buffer grows to; past it, it doubles
// with the bytes that arrived, so a client that announces a large frame
// and then stalls costs at most twice what it sent, or this much.
const frameGrowStep = 64 << 10

// ReadFrame reads one size-prefixed frame from r and returns its body (the
// bytes after the 4-byte size). The body is read into buf when it fits, so
// a connection can reuse one buffer: buf = frame[:0] after the request is
// handled. The returned slice aliases buf; anything decoded from it (record
// bytes, client id) is valid only until buf is reused.
//
// A size below 0 or above maxSize returns *FrameSizeError before anything more is
// read or allocated. io.EOF is returned only for a clean close between frames;
// a close inside a frame returns io.ErrUnexpectedEOF.
//
// ReadFrame is ReadFrameSize then ReadFrameBody with a nil GrowFunc.
func ReadFrame(r *bufio.Reader, buf []byte, maxSize int) ([]byte, error) {
	n, err := ReadFrameSize(r, maxSize)
	if err != nil {
		return buf[:0], err
	}
	return ReadFrameBody(r, buf, n, nil)
}

// ReadFrameSize reads a frame's 4-byte size prefix and checks it: a size
// below 0 or above maxSize returns *FrameSizeError, and the connection must
// be closed. io.EOF means a clean close before the prefix.
func ReadFrameSize(r *bufio.Reader, maxSize int) (int, error) {
	// Peek, not io.ReadFull into an array: that would move the array to
	// the heap on every request.
	sizeBuf, err := r.Peek(4)
	if err != nil {
		if err == io.EOF && len(sizeBuf) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return 0, err // io.EOF between frames, io.ErrUnexpectedEOF inside the prefix
	}
	r.Discard(4)
	size := int32(binary.BigEndian.Uint32(sizeBuf))
	if size < 0 || int64(size) > int64(maxSize) {
		return 0, &FrameSizeError{Size: size, Max: maxSize}
	}
	return int(size), nil
}

// A GrowFunc returns a buffer with buf's bytes (its length) and a capacity
// of at least want; ReadFrameBody calls it when the body outgrows buf.
// A connection uses it to charge the growth to a memory budget first; an
// error ends the read.
type GrowFunc func(buf []byte, want int) ([]byte, error)

// ReadFrameBody reads a frame body of n bytes (the size ReadFrameSize
// returned) into buf. When buf is too small the buffer grows as the bytes
// arrive, never ahead of them on the size's word: to twice what has been
// read (at least frameGrowStep), up to n. So the memory a frame costs
// follows the bytes its client sent, while a connection that keeps its
// buffer reads its usual request sizes with no growth at all. grow nil
// allocates a new buffer and copies.
func ReadFrameBody(r *bufio.Reader, buf []byte, n int, grow GrowFunc) ([]byte, error) {
	if grow == nil {
		grow = growCopy
	}
	buf = buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			want := min(n, max(2*len(buf), frameGrowStep))
			nb, err := grow(buf, want)
			if err != nil {
				return nb[:0], err
			}
			buf = nb
		}
		chunk := buf[len(buf):min(n, cap(buf))]
		if _, err := io.ReadFull(r, chunk); err != nil {
			return buf[:0], unexpected(err)
		}
		buf = buf[:len(buf)+len(chunk)]
	}
	return buf, nil
}

// growCopy is the default GrowFunc.
func growCopy(buf []byte, want int) ([]byte, error) {
	nb := make([]byte, len(buf), want)
	copy(nb, buf)
	return nb, nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// BeginFrame reserves the 4-byte size prefix of a response at the end of dst
// and returns the extended slice and the offset of the prefix, for EndFrame.
func BeginFrame(dst []byte) ([]byte, int) {
	return append(dst, 0, 0, 0, 0), len(dst)
}

// EndFrame patches the size prefix reserved by BeginFrame at start. extra is
// the number of bytes the caller sends outside dst as part of this frame
// (record bytes sent with sendfile); it is 0 for ordinary responses.
func EndFrame(dst []byte, start int, extra int64) {
	binary.BigEndian.PutUint32(dst[start:], uint32(int64(len(dst)-start-4)+extra))
}

// RequestHeader is a decoded request header (v0, v1 or v2).
//
//	v0: api_key int16 | api_version int16 | correlation_id int32
//	v1: v0 | client_id nullable string (int16 length, also in v2)
//	v2: v1 | tagged fields
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	// ClientID is a subslice of the frame; nil when null or absent (v0).
	ClientID []byte
	// HeaderVersion is 0, 1 or 2, as chosen from the key and version.
	HeaderVersion int8
	// Tags are the header's tagged fields (v2 only).
	Tags RawTags
}

// ErrShortHeader is returned by ParseRequestHeader for a frame too short to
// hold a header; Kafka closes such connections.
var ErrShortHeader = errors.New("kproto: request header truncated")

// RequestHeaderVersion returns the request header version for (key, version):
// 0 for ControlledShutdown v0, 2 for flexible versions, else 1.
func RequestHeaderVersion(key, version int16, flexible func(key, version int16) bool) int8 {
	switch {
	case key == 7 && version == 0:
		return 0
	case flexible(key, version):
		return 2
	default:
		return 1
	}
}

// ParseRequestHeader decodes the header at the start of frame (the bytes
// returned by ReadFrame) and returns it with the request body, a subslice of
// frame. flexible tells which (key, version) use header v2; nil means
// IsFlexible. Unknown keys parse as header v1 so the caller can answer with
// the correlation id before closing.
func ParseRequestHeader(frame []byte, flexible func(key, version int16) bool) (RequestHeader, []byte, error) {
	if flexible == nil {
		flexible = IsFlexible
	}
	r := Reader{Src: frame}
	var h RequestHeader
	h.APIKey = r.Int16()
	h.APIVersion = r.Int16()
	h.CorrelationID = r.Int32()
	if !r.Ok() {
		return h, nil, ErrShortHeader
	}
	h.HeaderVersion = RequestHeaderVersion(h.APIKey, h.APIVersion, flexible)
	if h.HeaderVersion >= 1 {
		// The client id stays a classic nullable string even in header v2.
		h.ClientID = r.NullableBytes16()
	}
	if h.HeaderVersion >= 2 {
		h.Tags = r.Tags()
	}
	if !r.Ok() {
		return h, nil, ErrShortHeader
	}
	return h, r.Src, nil
}

// NullableBytes16 reads an int16-length nullable string as a subslice of Src
// (no copy); -1 returns nil.
func (r *Reader) NullableBytes16() []byte {
	n := int(r.Int16())
	if r.bad || n < 0 {
		if n < -1 {
			r.Fail()
		}
		return nil
	}
	return r.Span(n)
}

// AppendRequestHeader appends a request header; the broker never sends
// requests, but tests and tools do.
func AppendRequestHeader(dst []byte, h *RequestHeader) []byte {
	dst = AppendInt16(dst, h.APIKey)
	dst = AppendInt16(dst, h.APIVersion)
	dst = AppendInt32(dst, h.CorrelationID)
	if h.HeaderVersion >= 1 {
		if h.ClientID == nil {
			dst = AppendInt16(dst, -1)
		} else {
			dst = AppendInt16(dst, int16(len(h.ClientID)))
			dst = append(dst, h.ClientID...)
		}
	}
	if h.HeaderVersion >= 2 {
		dst = AppendTags(dst, h.Tags)
	}
	return dst
}

// ResponseHeaderFlexible reports whether the response to (key, version) has a
// v1 header (with tagged fields). ApiVersions (18) never does: a client must
// be able to read the reply before it knows which versions the broker speaks.
func ResponseHeaderFlexible(key, version int16, flexible func(key, version int16) bool) bool {
	if flexible == nil {
		flexible = IsFlexible
	}
	return key != KeyApiVersions && flexible(key, version)
}

// AppendResponseHeader appends the response header for a request with the
// given key and version: the correlation id, then (v1) an empty tag section
// if the version is flexible and the key is not ApiVersions.
func AppendResponseHeader(dst []byte, key, version int16, correlationID int32) []byte {
	dst = AppendInt32(dst, correlationID)
	if ResponseHeaderFlexible(key, version, IsFlexible) {
		dst = append(dst, 0)
	}
	return dst
}
