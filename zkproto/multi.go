package zkproto

import (
	"errors"
	"fmt"
)

// ErrMultiMixed is the decoding failure of a multi that mixes read ops
// (getChildren, getData) with write ops. ZooKeeper's
// MultiOperationRecord.deserialize fails the same way ("Mixing different
// kind of ops"), which the server reports as ErrMarshallingError.
var ErrMultiMixed = errors.New("zkproto: multi mixes read and write ops")

// MultiHeader precedes each op of a MultiRequest and each result of a
// MultiResponse; a header with Done set ends the list.
type MultiHeader struct {
	Type OpCode
	Done bool
	Err  int32
}

// MultiHeaderSize is the encoded size of a MultiHeader.
const MultiHeaderSize = 9

// multiEnd is the header that ends both a MultiRequest and a MultiResponse.
var multiEnd = MultiHeader{Type: OpError, Done: true, Err: -1}

// Append appends h in jute order.
func (h *MultiHeader) Append(dst []byte) []byte {
	dst = AppendInt(dst, int32(h.Type))
	dst = AppendBool(dst, h.Done)
	return AppendInt(dst, h.Err)
}

// Decode reads h from r.
func (h *MultiHeader) Decode(r *Reader) {
	h.Type = OpCode(r.Int())
	h.Done = r.Bool()
	h.Err = r.Int()
}

// MultiOp is one op of a MultiRequest. Op's concrete type follows Type:
//
//	create, create2, createContainer  *CreateRequest
//	createTTL                         *CreateTTLRequest
//	delete                            *DeleteRequest
//	setData                           *SetDataRequest
//	check                             *CheckVersionRequest
//	getChildren                       *GetChildrenRequest  (multiRead only)
//	getData                           *GetDataRequest      (multiRead only)
type MultiOp struct {
	Type OpCode
	Op   Record
}

// NewMultiOp returns a zero op record for a multi op of type op, or nil if
// op cannot appear in a multi.
func NewMultiOp(op OpCode) Record {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer:
		return new(CreateRequest)
	case OpCreateTTL:
		return new(CreateTTLRequest)
	case OpDelete:
		return new(DeleteRequest)
	case OpSetData:
		return new(SetDataRequest)
	case OpCheck:
		return new(CheckVersionRequest)
	case OpGetChildren:
		return new(GetChildrenRequest)
	case OpGetData:
		return new(GetDataRequest)
	}
	return nil
}

// IsReadOp reports whether op is one of the read ops a multiRead carries.
func IsReadOp(op OpCode) bool { return op == OpGetChildren || op == OpGetData }

// MultiRequest is the body of multi and multiRead (see the package doc for
// the framing). The encoder writes err -1 in every op header, as ZooKeeper's
// client does; the decoder ignores header errs, stops at the first header
// with done set whatever its type, and fails on an op type NewMultiOp
// refuses or on a mix of read and write ops. An empty multi is valid.
type MultiRequest struct {
	Ops []MultiOp
}

// Append appends m in jute order, ending with the done header.
func (m *MultiRequest) Append(dst []byte) []byte {
	for _, op := range m.Ops {
		h := MultiHeader{Type: op.Type, Err: -1}
		dst = h.Append(dst)
		if op.Op != nil {
			dst = op.Op.Append(dst)
		}
	}
	return multiEnd.Append(dst)
}

// Decode reads m from r.
func (m *MultiRequest) Decode(r *Reader) {
	m.Ops = nil
	var h MultiHeader
	for {
		h.Decode(r)
		if r.Err() != nil || h.Done {
			return
		}
		rec := NewMultiOp(h.Type)
		if rec == nil {
			r.Fail(fmt.Errorf("zkproto: invalid op type %d in multi", int32(h.Type)))
			return
		}
		if len(m.Ops) > 0 && IsReadOp(m.Ops[0].Type) != IsReadOp(h.Type) {
			r.Fail(ErrMultiMixed)
			return
		}
		rec.Decode(r)
		m.Ops = append(m.Ops, MultiOp{Type: h.Type, Op: rec})
	}
}

// MultiResult is one result of a MultiResponse. Which fields are on the
// wire follows Type:
//
//	create                            Path
//	create2                           Path, Stat
//	setData                           Stat
//	delete, check                     nothing
//	getChildren                       Children
//	getData                           Data, Stat
//	OpError                           Err (header err and ErrorResponse body)
//
// ZooKeeper reports createTTL and createContainer results as create2. In a
// failed multi every result is OpError: ErrOK for the ops before the failing
// one, its error for it, ErrRuntimeInconsistency after it.
type MultiResult struct {
	Type     OpCode
	Err      Err
	Path     string
	Stat     Stat
	Data     []byte
	Children []string
}

// Append appends res, header included. A Type outside the table above gets
// a header and no payload; Decode refuses it.
func (res *MultiResult) Append(dst []byte) []byte {
	h := MultiHeader{Type: res.Type}
	if res.Type == OpError {
		h.Err = int32(res.Err)
	}
	dst = h.Append(dst)
	switch res.Type {
	case OpCreate:
		dst = AppendString(dst, res.Path)
	case OpCreate2:
		dst = res.Stat.Append(AppendString(dst, res.Path))
	case OpSetData:
		dst = res.Stat.Append(dst)
	case OpGetChildren:
		dst = AppendStrings(dst, res.Children)
	case OpGetData:
		dst = res.Stat.Append(AppendBuffer(dst, res.Data))
	case OpError:
		dst = AppendInt(dst, int32(res.Err))
	}
	return dst
}

// decodeBody reads the payload of a result of type res.Type.
func (res *MultiResult) decodeBody(r *Reader) {
	switch res.Type {
	case OpCreate:
		res.Path = r.String()
	case OpCreate2:
		res.Path = r.String()
		res.Stat.Decode(r)
	case OpSetData:
		res.Stat.Decode(r)
	case OpDelete, OpCheck:
	case OpGetChildren:
		res.Children = r.Strings()
	case OpGetData:
		res.Data = r.Buffer()
		res.Stat.Decode(r)
	case OpError:
		// Like ZooKeeper's client, take the error from the body.
		res.Err = Err(r.Int())
	default:
		r.Fail(fmt.Errorf("zkproto: invalid type %d in multi response", int32(res.Type)))
	}
}

// MultiResponse is the reply to multi and multiRead. The reply header of a
// multi carries err 0 even when an op failed.
type MultiResponse struct {
	Results []MultiResult
}

// Append appends m in jute order, ending with the done header.
func (m *MultiResponse) Append(dst []byte) []byte {
	for i := range m.Results {
		dst = m.Results[i].Append(dst)
	}
	return multiEnd.Append(dst)
}

// Decode reads m from r.
func (m *MultiResponse) Decode(r *Reader) {
	m.Results = nil
	var h MultiHeader
	for {
		h.Decode(r)
		if r.Err() != nil || h.Done {
			return
		}
		res := MultiResult{Type: h.Type}
		res.decodeBody(r)
		if r.Err() != nil {
			return
		}
		m.Results = append(m.Results, res)
	}
}
