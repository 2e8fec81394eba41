package zkproto

// RequestHeader starts every request body after the ConnectRequest.
type RequestHeader struct {
	Xid  int32 // client-chosen; the reply echoes it. Special xids: XidPing etc.
	Type OpCode
}

// RequestHeaderSize is the encoded size of a RequestHeader.
const RequestHeaderSize = 8

// Append appends h in jute order.
func (h *RequestHeader) Append(dst []byte) []byte {
	return AppendInt(AppendInt(dst, h.Xid), int32(h.Type))
}

// Decode reads h from r.
func (h *RequestHeader) Decode(r *Reader) {
	h.Xid = r.Int()
	h.Type = OpCode(r.Int())
}

// ReplyHeader starts every reply body after the ConnectResponse. A reply
// with Err != ErrOK carries no record after the header (except a multi,
// whose failures are in the MultiResponse and whose header err is 0).
type ReplyHeader struct {
	Xid  int32
	Zxid int64 // the server's last processed zxid (-1 in notifications)
	Err  Err
}

// ReplyHeaderSize is the encoded size of a ReplyHeader.
const ReplyHeaderSize = 16

// Append appends h in jute order.
func (h *ReplyHeader) Append(dst []byte) []byte {
	dst = AppendInt(dst, h.Xid)
	dst = AppendLong(dst, h.Zxid)
	return AppendInt(dst, int32(h.Err))
}

// Decode reads h from r.
func (h *ReplyHeader) Decode(r *Reader) {
	h.Xid = r.Int()
	h.Zxid = r.Long()
	h.Err = Err(r.Int())
}

// ErrorResponse is the body of a failed op in a MultiResponse.
type ErrorResponse struct {
	Err Err
}

// Append appends e in jute order.
func (e *ErrorResponse) Append(dst []byte) []byte { return AppendInt(dst, int32(e.Err)) }

// Decode reads e from r.
func (e *ErrorResponse) Decode(r *Reader) { e.Err = Err(r.Int()) }
