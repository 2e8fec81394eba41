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
// A server reads frames with ReadFrame (len must be in [0, MaxBuffer]),
// decodes the RequestHeader, then the body with DecodeRequest, and answers
// with AppendReply or, for watches, AppendNotification (xid -1, zxid -1).
// A reply whose header err is not ErrOK has no record after the header.
//
// Multi (opcodes multi and multiRead): the body is a list of ops, each a
// MultiHeader then the op's request record, ended by a header with done set.
// The reply body has the same shape with results instead of requests:
//
//	request:  | type i32 | done=0 | err=-1 | op record (CreateRequest...) | ... | -1 | done=1 | -1 |
//	reply:    | type i32 | done=0 | err=0  | result (CreateResponse...)   | ... | -1 | done=1 | -1 |
//	failed:   | -1 (OpError) | done=0 | err i32 | ErrorResponse{err i32}   | ... | -1 | done=1 | -1 |
//
// MultiHeader is type i32 | done bool (1 byte) | err i32 (9 bytes). delete
// and check results have no body. A failed multi is all OpError results (0
// before the failing op, its error, then RuntimeInconsistency) under a reply
// header whose err is 0.
//
// Jute primitives: int = 4 bytes, long = 8, boolean = 1, buffer and ustring =
// i32 length then bytes (length -1 = null), vector = i32 count then elements
// (-1 = null).
//
// Encoders are append-style (AppendX(dst, ...) []byte). Decoding goes through
// Reader, a sticky-error reader: once a read fails every later read returns a
// zero value and Err reports the first failure. Invariant: no length read from
// the wire allocates more than the bytes that remain in the frame.
//
// Hand-written exceptions to zookeeper.jute (everything else follows it):
//   - ConnectRequest and ConnectResponse: the trailing readOnly byte is
//     optional (HasReadOnly); ZooKeeper 3.8 reads and writes it by hand.
//   - DeleteContainerRequest: the body is the raw path, no length prefix.
//   - MultiRequest and MultiResponse: the header-framed lists above
//     (MultiOperationRecord and MultiResponse in ZooKeeper's Java source).
//   - Request bodies may carry trailing bytes: ZooKeeper never checks that a
//     request was consumed, so DecodeRequest ignores them.
package zkproto
