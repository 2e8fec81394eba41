package zkproto

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrShort is reported by a Reader that ran out of bytes.
var ErrShort = errors.New("zkproto: record truncated")

// Reader decodes jute primitives from Src. The first failure sticks: every
// later read returns a zero value, and Err returns that failure.
type Reader struct {
	Src []byte
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{Src: b} }

// Err returns the first decoding failure, or nil.
func (r *Reader) Err() error { return r.err }

// Len reports how many bytes remain.
func (r *Reader) Len() int { return len(r.Src) }

// Fail makes err the reader's sticky error unless one is already set.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
		r.Src = nil
	}
}

// Complete reports the sticky error, or an error if bytes remain unread.
func (r *Reader) Complete() error {
	if r.err != nil {
		return r.err
	}
	if len(r.Src) != 0 {
		return fmt.Errorf("zkproto: %d trailing bytes", len(r.Src))
	}
	return nil
}

func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.Src) {
		r.Fail(ErrShort)
		return nil
	}
	b := r.Src[:n:n]
	r.Src = r.Src[n:]
	return b
}

// Int reads a jute int.
func (r *Reader) Int() int32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(b))
}

// Long reads a jute long.
func (r *Reader) Long() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// Bool reads a jute boolean (any non-zero byte is true).
func (r *Reader) Bool() bool {
	b := r.take(1)
	return b != nil && b[0] != 0
}

// Buffer reads a jute buffer. A length of -1 is null and returns nil. The
// result aliases Src.
func (r *Reader) Buffer() []byte {
	n := r.Int()
	if r.err != nil || n == -1 {
		return nil
	}
	if n < -1 {
		r.Fail(fmt.Errorf("zkproto: negative buffer length %d", n))
		return nil
	}
	return r.take(int(n))
}

// String reads a jute ustring (null reads as "").
func (r *Reader) String() string { return string(r.Buffer()) }

// VectorLen reads a vector count; -1 (null) reads as 0. min is the smallest
// encoded size of one element, used to refuse counts the frame cannot hold.
func (r *Reader) VectorLen(min int) int {
	n := r.Int()
	if r.err != nil || n == -1 {
		return 0
	}
	if n < -1 || (min > 0 && int64(n)*int64(min) > int64(len(r.Src))) {
		r.Fail(fmt.Errorf("zkproto: bad vector length %d", n))
		return 0
	}
	return int(n)
}

// Strings reads a vector of ustrings.
func (r *Reader) Strings() []string {
	n := r.VectorLen(4)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.String()
	}
	return out
}
