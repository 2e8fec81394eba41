package zkproto

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// MaxBuffer is the default jute.maxbuffer: the largest frame body ZooKeeper
// reads from a client (NIOServerCnxn.readLength refuses len > maxBuffer with
// no padding; the padding of BinaryInputArchive.checkLength applies only to
// the lengths of strings and buffers inside a record, which a frame of at
// most MaxBuffer bytes bounds anyway).
const MaxBuffer = 0xfffff

// FrameLengthError is returned by ReadFrame for a length prefix outside
// [0, Max]. ZooKeeper drops such a connection without writing anything.
//
// On a connection's first frame it is also how a four-letter-word command
// arrives: "ruok", "srvr" and the others read as a length above MaxBuffer,
// so the server inspects Length's four bytes before giving up.
type FrameLengthError struct {
	Length int32
	Max    int
}

func (e *FrameLengthError) Error() string {
	return fmt.Sprintf("zkproto: frame length %d outside [0, %d] (jute.maxbuffer)", e.Length, e.Max)
}

// Word returns the length prefix as four bytes, as a four-letter word.
func (e *FrameLengthError) Word() string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(e.Length))
	return string(b[:])
}

// ReadFrame reads one length-prefixed frame from r and returns its body. The
// body is read into buf when it fits (buf's capacity is reused, so the result
// is only valid until the next call with the same buf); otherwise a new
// buffer of exactly the announced length is allocated. A length < 0 or > max
// fails with *FrameLengthError before anything is allocated. A clean end of
// stream before the first length byte is io.EOF; one inside a frame is
// io.ErrUnexpectedEOF.
func ReadFrame(r *bufio.Reader, buf []byte, max int) ([]byte, error) {
	// Peek rather than io.ReadFull into a local array, which would escape.
	lb, err := r.Peek(4)
	if err != nil {
		if err == io.EOF && len(lb) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(lb))
	r.Discard(4) // cannot fail: the 4 bytes are buffered
	if n < 0 || int64(n) > int64(max) {
		return nil, &FrameLengthError{Length: n, Max: max}
	}
	if cap(buf) >= int(n) {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// AppendFrame appends rec as one length-prefixed frame with no header: the
// shape of the ConnectRequest and ConnectResponse.
func AppendFrame(dst []byte, rec Record) []byte {
	dst, pos := BeginFrame(dst)
	return EndFrame(rec.Append(dst), pos)
}

// AppendRequest appends a request frame: length, header, then rec (nil for
// requests without a body).
func AppendRequest(dst []byte, h RequestHeader, rec Record) []byte {
	dst, pos := BeginFrame(dst)
	dst = h.Append(dst)
	if rec != nil {
		dst = rec.Append(dst)
	}
	return EndFrame(dst, pos)
}

// AppendReply appends a reply frame: length, header, then rec. Pass a nil
// rec for replies without a body: errors (h.Err != ErrOK), ping, auth,
// setWatches, delete, check/removeWatches, addWatch, closeSession.
func AppendReply(dst []byte, h ReplyHeader, rec Record) []byte {
	dst, pos := BeginFrame(dst)
	dst = h.Append(dst)
	if rec != nil {
		dst = rec.Append(dst)
	}
	return EndFrame(dst, pos)
}

// NotificationHeader is the reply header of every watch notification.
var NotificationHeader = ReplyHeader{Xid: XidNotification, Zxid: -1, Err: ErrOK}

// AppendNotification appends a watch notification frame: the
// NotificationHeader, then ev.
func AppendNotification(dst []byte, ev WatcherEvent) []byte {
	dst, pos := BeginFrame(dst)
	h := NotificationHeader
	dst = h.Append(dst)
	return EndFrame(ev.Append(dst), pos)
}
