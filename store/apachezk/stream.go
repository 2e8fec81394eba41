package apachezk

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"

	"github.com/zkafka/zkafka/zkproto"
)

// ErrCorrupt is wrapped by every error about the content of a file.
var ErrCorrupt = errors.New("apachezk: corrupt data")

// errTruncated marks a read past the end of the file.
var errTruncated = errors.New("truncated")

// Error names the file and the byte offset of a damage.
type Error struct {
	File   string
	Offset int64
	Err    error
}

func (e *Error) Error() string { return fmt.Sprintf("%s at offset %d: %v", e.File, e.Offset, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// reader is a sticky-error jute reader over a file stream that keeps the
// running Adler-32 of what it consumed and its offset. Lengths are checked
// against the bytes left in the file before anything is allocated.
type reader struct {
	r    *bufio.Reader
	sum  hash.Hash32
	off  int64
	size int64
	err  error
	at   int64 // the offset of the first error
	buf  [8]byte
}

func newReader(r io.Reader, size int64) *reader {
	return &reader{r: bufio.NewReaderSize(r, 256<<10), sum: adler32.New(), size: size}
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err, r.at = err, r.off
	}
}

func (r *reader) full(b []byte) {
	if r.err != nil {
		clear(b)
		return
	}
	n, err := io.ReadFull(r.r, b)
	r.sum.Write(b[:n])
	if err != nil {
		r.fail(errTruncated)
		clear(b)
	}
	r.off += int64(n)
}

func (r *reader) long() int64 {
	r.full(r.buf[:8])
	return int64(binary.BigEndian.Uint64(r.buf[:8]))
}

func (r *reader) int() int32 {
	r.full(r.buf[:4])
	return int32(binary.BigEndian.Uint32(r.buf[:4]))
}

// buffer reads a jute buffer; -1 is null.
func (r *reader) buffer() []byte {
	at := r.off
	n := r.int()
	if r.err != nil || n == -1 {
		return nil
	}
	if n < -1 {
		r.fail(fmt.Errorf("%w: length %d", ErrCorrupt, n))
		r.at = at
		return nil
	}
	if int64(n) > r.size-r.off {
		r.fail(errTruncated)
		return nil
	}
	b := make([]byte, n)
	r.full(b)
	return b
}

func (r *reader) str() string { return string(r.buffer()) }

// count reads a vector or map count: -1 is 0, other negatives and counts
// of more elements of minSize bytes than the file holds are corrupt.
func (r *reader) count(minSize int64) int {
	at := r.off
	n := r.int()
	if r.err != nil || n == -1 {
		return 0
	}
	if n < 0 || int64(n)*minSize > r.size-r.off {
		r.fail(fmt.Errorf("%w: count %d", ErrCorrupt, n))
		r.at = at
		return 0
	}
	return int(n)
}

func (r *reader) acls() []zkproto.ACL {
	n := r.count(12)
	out := make([]zkproto.ACL, 0, n)
	for ; n > 0 && r.err == nil; n-- {
		perms := r.int()
		out = append(out, zkproto.ACL{Perms: perms, ID: zkproto.ID{Scheme: r.str(), ID: r.str()}})
	}
	return out
}

// seal reads a seal (adler32 i64 | "/") and checks it against the bytes
// before it.
func (r *reader) seal() {
	want := r.sum.Sum32()
	at := r.off
	got := r.long()
	path := r.str()
	if r.err == nil && (uint64(got) != uint64(want) || path != "/") {
		r.fail(fmt.Errorf("%w: checksum mismatch", ErrCorrupt))
		r.at = at
	}
}

// fileHeader reads a FileHeader and checks its magic and version.
func (r *reader) fileHeader(magic string) (dbid int64) {
	m := r.int()
	v := r.int()
	dbid = r.long()
	if r.err != nil {
		return 0
	}
	if got := string(binary.BigEndian.AppendUint32(nil, uint32(m))); got != magic {
		r.fail(fmt.Errorf("%w: magic %q, want %q", ErrCorrupt, got, magic))
		r.at = 0
	} else if v != 2 {
		r.fail(fmt.Errorf("%w: version %d, want 2", ErrCorrupt, v))
		r.at = 4
	}
	return dbid
}

func adler(b []byte) uint32 { return adler32.Checksum(b) }
