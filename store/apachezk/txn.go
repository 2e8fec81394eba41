package apachezk

import (
	"fmt"

	"github.com/zkafka/zkafka/zkproto"
)

// txnHeader is the TxnHeader of a log entry.
type txnHeader struct {
	clientID int64
	cxid     int32
	zxid     int64
	time     int64
	typ      int32
}

// txn is one txn record of any type (the fields its type has), or one of
// the txns of a multi.
type txn struct {
	hdr            txnHeader // top level only
	typ            zkproto.OpCode
	path           string
	data           []byte
	acl            []zkproto.ACL
	ephemeral      bool
	parentCVersion int32
	ttl            int64
	version        int32
	timeout        int32    // createSession
	paths          []string // closeSession's paths2Delete (nil: none listed)
	err            int32    // error
	multi          []txn
}

// decodeEntry decodes a log entry: a TxnHeader, the record of its type and
// an optional TxnDigest (SerializeUtils.deserializeTxn).
func decodeEntry(b []byte) (*txn, error) {
	r := zkproto.NewReader(b)
	t := &txn{}
	t.hdr = txnHeader{clientID: r.Long(), cxid: r.Int(), zxid: r.Long(), time: r.Long(), typ: r.Int()}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("%w: txn header: %v", ErrCorrupt, err)
	}
	t.typ = zkproto.OpCode(t.hdr.typ)
	if err := t.decodeBody(r, true); err != nil {
		return nil, err
	}
	// A TxnDigest (version i32 | treeDigest i64) may follow.
	if r.Len() == 12 {
		r.Int()
		r.Long()
	}
	if r.Err() != nil || r.Len() != 0 {
		return nil, fmt.Errorf("%w: type %v txn zxid 0x%x: %d bytes left over", ErrCorrupt, t.typ, t.hdr.zxid, r.Len())
	}
	return t, nil
}

// decodeBody reads the record of t.typ. top is false inside a multi, where
// fewer types are allowed (DataTree.processTxn's multi case).
func (t *txn) decodeBody(r *zkproto.Reader, top bool) error {
	switch t.typ {
	case zkproto.OpCreate, zkproto.OpCreate2:
		t.path, t.data, t.acl, t.ephemeral = r.String(), r.Buffer(), zkproto.DecodeACLs(r), r.Bool()
		t.parentCVersion = -1 // CreateTxnV0 (before 3.3) has none
		if r.Len() >= 4 || t.typ == zkproto.OpCreate2 || !top {
			t.parentCVersion = r.Int()
		}
	case zkproto.OpCreateTTL:
		t.path, t.data, t.acl, t.parentCVersion, t.ttl = r.String(), r.Buffer(), zkproto.DecodeACLs(r), r.Int(), r.Long()
	case zkproto.OpCreateContainer:
		t.path, t.data, t.acl, t.parentCVersion = r.String(), r.Buffer(), zkproto.DecodeACLs(r), r.Int()
	case zkproto.OpDelete, zkproto.OpDeleteContainer:
		t.path = r.String()
	case zkproto.OpSetData:
		t.path, t.data, t.version = r.String(), r.Buffer(), r.Int()
	case zkproto.OpCheck:
		t.path, t.version = r.String(), r.Int()
	case zkproto.OpError:
		t.err = r.Int()
	default:
		if !top {
			return fmt.Errorf("%w: unknown txn type %d in a multi", ErrCorrupt, int32(t.typ))
		}
		return t.decodeTop(r)
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("%w: type %v txn: %v", ErrCorrupt, t.typ, err)
	}
	return nil
}

// decodeTop reads the records that only appear at the top level.
func (t *txn) decodeTop(r *zkproto.Reader) error {
	switch t.typ {
	case zkproto.OpReconfig:
		t.path, t.data, t.version = r.String(), r.Buffer(), r.Int()
	case zkproto.OpSetACL:
		t.path, t.acl, t.version = r.String(), zkproto.DecodeACLs(r), r.Int()
	case zkproto.OpCreateSession:
		t.timeout = r.Int()
	case zkproto.OpCloseSession:
		// CloseSessionTxn (3.6+); older logs have an empty body.
		// Exactly 12 bytes may also be a TxnDigest alone: it is paths
		// only if they parse and use the bytes up, or leave a digest.
		if r.Len() > 0 {
			save := *r
			paths := r.Strings()
			if r.Err() != nil || (r.Len() != 0 && r.Len() != 12) {
				*r = save
			} else {
				t.paths = paths
			}
		}
	case zkproto.OpMulti:
		n := r.VectorLen(8)
		t.multi = make([]txn, n)
		for i := range t.multi {
			sub := &t.multi[i]
			sub.typ = zkproto.OpCode(r.Int())
			body := r.Buffer()
			if r.Err() != nil {
				break
			}
			br := zkproto.NewReader(body)
			if err := sub.decodeBody(br, false); err != nil {
				return err
			}
			if br.Len() != 0 {
				return fmt.Errorf("%w: type %v in a multi: %d bytes left over", ErrCorrupt, sub.typ, br.Len())
			}
		}
	default:
		return fmt.Errorf("%w: unknown txn type %d", ErrCorrupt, int32(t.typ))
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("%w: type %v txn: %v", ErrCorrupt, t.typ, err)
	}
	return nil
}
