package zkproto

import (
	"errors"
	"fmt"
)

// Record is a jute record: it appends its encoding to dst and decodes itself
// from a Reader (failures stick in the Reader).
type Record interface {
	Append(dst []byte) []byte
	Decode(r *Reader)
}

// ErrUnknownOpcode is returned by DecodeRequest for an opcode a client may not
// send. ZooKeeper answers such a request with ErrUnimplemented and closes the
// connection.
var ErrUnknownOpcode = errors.New("zkproto: unknown opcode")

// Empty is the record of requests and results with no body: ping,
// closeSession, whoAmI, and the delete and check results of a multi.
type Empty struct{}

// Append appends nothing.
func (*Empty) Append(dst []byte) []byte { return dst }

// Decode reads nothing.
func (*Empty) Decode(*Reader) {}

// NewRequest returns a zero request record for op, or nil if a client may
// not send op. Several opcodes share a record shape:
//
//	create, create2, createContainer  *CreateRequest
//	getChildren, getChildren2         *GetChildrenRequest
//	multi, multiRead                  *MultiRequest
//	ping, closeSession, whoAmI        *Empty
//
// check and notification are refused as they are by ZooKeeper's
// Request.isValid (check is only valid inside a multi); createSession is the
// ConnectRequest, which has no request header.
func NewRequest(op OpCode) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return new(CreateRequest)
	case OpCreateTTL:
		return new(CreateTTLRequest)
	case OpDelete:
		return new(DeleteRequest)
	case OpDeleteContainer:
		return new(DeleteContainerRequest)
	case OpExists:
		return new(ExistsRequest)
	case OpGetData:
		return new(GetDataRequest)
	case OpSetData:
		return new(SetDataRequest)
	case OpGetACL:
		return new(GetACLRequest)
	case OpSetACL:
		return new(SetACLRequest)
	case OpGetChildren, OpGetChildren2:
		return new(GetChildrenRequest)
	case OpSync:
		return new(SyncRequest)
	case OpPing, OpCloseSession, OpWhoAmI:
		return new(Empty)
	case OpMulti, OpMultiRead:
		return new(MultiRequest)
	case OpReconfig:
		return new(ReconfigRequest)
	case OpCheckWatches:
		return new(CheckWatchesRequest)
	case OpRemoveWatches:
		return new(RemoveWatchesRequest)
	case OpAuth:
		return new(AuthPacket)
	case OpSetWatches:
		return new(SetWatches)
	case OpSetWatches2:
		return new(SetWatches2)
	case OpSASL:
		return new(GetSASLRequest)
	case OpGetEphemerals:
		return new(GetEphemeralsRequest)
	case OpGetAllChildrenNumber:
		return new(GetAllChildrenNumberRequest)
	case OpAddWatch:
		return new(AddWatchRequest)
	}
	return nil
}

// DecodeRequest decodes the body of a request (the bytes after its
// RequestHeader) of type op. It fails with ErrUnknownOpcode for an opcode
// NewRequest refuses, and with the Reader's error for a truncated or
// malformed body; ZooKeeper answers the latter with ErrMarshallingError.
//
// Like ZooKeeper (ByteBufferInputStream.byteBuffer2Record), it ignores bytes
// after the record: the Java server never checks that a request body was
// consumed, so refusing trailing bytes would reject requests it accepts.
// Lengths are checked against the bytes left before anything is allocated.
//
// The []byte fields of the result (Data, Auth, Token) alias body: a caller
// that reuses its frame buffer (ReadFrame) must copy them before keeping
// them. Strings are copies.
func DecodeRequest(op OpCode, body []byte) (Record, error) {
	rec := NewRequest(op)
	if rec == nil {
		return nil, fmt.Errorf("%w %d", ErrUnknownOpcode, int32(op))
	}
	r := NewReader(body)
	rec.Decode(r)
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("zkproto: decoding opcode %d: %w", int32(op), err)
	}
	return rec, nil
}
