package zkproto

import "encoding/binary"

// AppendInt appends a jute int.
func AppendInt(dst []byte, v int32) []byte { return binary.BigEndian.AppendUint32(dst, uint32(v)) }

// AppendLong appends a jute long.
func AppendLong(dst []byte, v int64) []byte { return binary.BigEndian.AppendUint64(dst, uint64(v)) }

// AppendBool appends a jute boolean.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendBuffer appends a jute buffer; nil is encoded as null (-1).
func AppendBuffer(dst, b []byte) []byte {
	if b == nil {
		return AppendInt(dst, -1)
	}
	dst = AppendInt(dst, int32(len(b)))
	return append(dst, b...)
}

// AppendString appends a jute ustring.
func AppendString(dst []byte, s string) []byte {
	dst = AppendInt(dst, int32(len(s)))
	return append(dst, s...)
}

// AppendStrings appends a vector of ustrings (nil as an empty vector, which
// is what ZooKeeper's Java server sends).
func AppendStrings(dst []byte, v []string) []byte {
	dst = AppendInt(dst, int32(len(v)))
	for _, s := range v {
		dst = AppendString(dst, s)
	}
	return dst
}

// BeginFrame reserves the 4-byte length prefix of a frame at the end of dst
// and returns the position to pass to EndFrame.
func BeginFrame(dst []byte) ([]byte, int) {
	return append(dst, 0, 0, 0, 0), len(dst)
}

// EndFrame patches the length prefix reserved by BeginFrame at pos.
func EndFrame(dst []byte, pos int) []byte {
	binary.BigEndian.PutUint32(dst[pos:], uint32(len(dst)-pos-4))
	return dst
}
