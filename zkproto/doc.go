// Package zkproto is the jute codec of the ZooKeeper client protocol: the
// primitives, the request and reply headers, every record of zookeeper.jute
// that clients and txns use, the opcodes and the error codes.
//
// Framing on the wire (all integers big-endian):
//
//	+--------+------------------------------------------+
//	| len i32| body (len bytes)                         |
//	+--------+------------------------------------------+
//	request body:  xid i32 | type i32 | record...
//	reply body:    xid i32 | zxid i64 | err i32 | record...
//	ConnectRequest / ConnectResponse have no header (the first frame).
//
// Jute primitives: int = 4 bytes, long = 8, boolean = 1, buffer and ustring =
// i32 length then bytes (length -1 = null), vector = i32 count then elements
// (-1 = null).
//
// Encoders are append-style (AppendX(dst, ...) []byte). Decoding goes through
// Reader, a sticky-error reader: once a read fails every later read returns a
// zero value and Err reports the first failure. Invariant: no length read from
// the wire allocates more than the bytes that remain in the frame.
package zkproto
