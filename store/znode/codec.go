package znode

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/zkafka/zkafka/zkproto"
)

// txnVersion is the first byte of an encoded Txn.
const txnVersion = 1

// Txn encoding (big-endian jute primitives, see zkproto):
//
//	version u8 (=1) | zxid i64 | time i64 | session i64 | flags u8 (1=multi, 2=super, 4=owner, 8=enforceQuota, 16=saslScheme)
//	owner: i64, only when flag 4 is set (Txn.Owner != 0)
//	auth:  count i32, then per id:  scheme ustring | id ustring
//	ops:   count i32, then per op:  type i32 | path ustring | data buffer (-1 = null)
//	       | acl vector (count i32, then perms i32 | scheme ustring | id ustring)
//	       | mode i32 | ttl i64 | version i32 | sessionTimeout i32
const (
	flagMulti = 1 << iota
	flagSuper
	flagOwner
	flagEnforceQuota
	flagSASLScheme
	minOpSize = 4 + 4 + 4 + 4 + 4 + 8 + 4 + 4
)

// Append appends the encoding of txn to dst.
func (txn *Txn) Append(dst []byte) []byte {
	var flags byte
	if txn.Multi {
		flags |= flagMulti
	}
	if txn.Super {
		flags |= flagSuper
	}
	if txn.Owner != 0 {
		flags |= flagOwner
	}
	if txn.EnforceQuota {
		flags |= flagEnforceQuota
	}
	if txn.SASLScheme {
		flags |= flagSASLScheme
	}
	dst = append(dst, txnVersion)
	dst = zkproto.AppendLong(dst, txn.Zxid)
	dst = zkproto.AppendLong(dst, txn.Time)
	dst = zkproto.AppendLong(dst, txn.Session)
	dst = append(dst, flags)
	if txn.Owner != 0 {
		dst = zkproto.AppendLong(dst, txn.Owner)
	}
	dst = zkproto.AppendInt(dst, int32(len(txn.Auth)))
	for _, id := range txn.Auth {
		dst = zkproto.AppendID(dst, id)
	}
	dst = zkproto.AppendInt(dst, int32(len(txn.Ops)))
	for i := range txn.Ops {
		dst = txn.Ops[i].append(dst)
	}
	return dst
}

// Size returns the length of txn's encoding, so that Append can be given a
// buffer that never grows.
func (txn *Txn) Size() int {
	n := 1 + 8 + 8 + 8 + 1 + 4 + 4
	if txn.Owner != 0 {
		n += 8
	}
	for _, id := range txn.Auth {
		n += idSize(id)
	}
	for i := range txn.Ops {
		n += txn.Ops[i].size()
	}
	return n
}

// size is the length of op's encoding (minOpSize plus its variable parts).
func (op *Op) size() int {
	n := minOpSize + len(op.Path) + len(op.Data)
	for _, a := range op.ACL {
		n += 4 + idSize(a.ID)
	}
	return n
}

// idSize is the length of an encoded Id record.
func idSize(id zkproto.ID) int { return 4 + len(id.Scheme) + 4 + len(id.ID) }

func (op *Op) append(dst []byte) []byte {
	dst = zkproto.AppendInt(dst, int32(op.Type))
	dst = zkproto.AppendString(dst, op.Path)
	dst = zkproto.AppendBuffer(dst, op.Data)
	dst = zkproto.AppendACLs(dst, op.ACL)
	dst = zkproto.AppendInt(dst, int32(op.Mode))
	dst = zkproto.AppendLong(dst, op.TTL)
	dst = zkproto.AppendInt(dst, op.Version)
	return zkproto.AppendInt(dst, op.SessionTimeout)
}

// ErrTxnVersion is returned by DecodeTxn for an unknown encoding version.
var ErrTxnVersion = errors.New("znode: unknown txn encoding version")

// DecodeTxn decodes a Txn encoded by Append. The Data of its ops aliases b.
func DecodeTxn(b []byte) (Txn, error) {
	if len(b) == 0 {
		return Txn{}, zkproto.ErrShort
	}
	if b[0] != txnVersion {
		return Txn{}, fmt.Errorf("%w %d", ErrTxnVersion, b[0])
	}
	r := zkproto.NewReader(b[1:])
	var txn Txn
	txn.Zxid = r.Long()
	txn.Time = r.Long()
	txn.Session = r.Long()
	flags := byteOf(r)
	if flags&^(flagMulti|flagSuper|flagOwner|flagEnforceQuota|flagSASLScheme) != 0 {
		r.Fail(fmt.Errorf("znode: unknown txn flags %#x", flags))
	}
	txn.Multi = flags&flagMulti != 0
	txn.Super = flags&flagSuper != 0
	txn.EnforceQuota = flags&flagEnforceQuota != 0
	txn.SASLScheme = flags&flagSASLScheme != 0
	if flags&flagOwner != 0 {
		if txn.Owner = r.Long(); txn.Owner == 0 {
			r.Fail(errors.New("znode: txn owner flag with owner 0"))
		}
	}
	txn.Auth = decodeAuth(r)
	if n := r.VectorLen(minOpSize); n > 0 {
		txn.Ops = make([]Op, n)
		for i := range txn.Ops {
			txn.Ops[i].decode(r)
		}
	}
	if err := r.Complete(); err != nil {
		return Txn{}, err
	}
	return txn, nil
}

func (op *Op) decode(r *zkproto.Reader) {
	op.Type = zkproto.OpCode(r.Int())
	op.Path = r.String()
	op.Data = r.Buffer()
	op.ACL = zkproto.DecodeACLs(r)
	op.Mode = zkproto.CreateMode(r.Int())
	op.TTL = r.Long()
	op.Version = r.Int()
	op.SessionTimeout = r.Int()
}

// decodeAuth reads a txn's identities. Nearly every txn carries one of a
// few lists (a client machine's ip id, with the digest ids its sessions
// added), so the lists recently decoded are kept by their encoding and
// returned shared, instead of a new list and two strings per id each
// time. Nothing modifies a txn's Auth.
func decodeAuth(r *zkproto.Reader) []zkproto.ID {
	for i := range recentAuth {
		// A cached encoding is a whole, valid vector: bytes that start
		// with it decode to the same list.
		if c := recentAuth[i].Load(); c != nil && bytes.HasPrefix(r.Src, c.enc) {
			r.Src = r.Src[len(c.enc):]
			return c.ids
		}
	}
	start := r.Src
	n := r.VectorLen(8)
	if n == 0 {
		return nil
	}
	ids := make([]zkproto.ID, n)
	for i := range ids {
		ids[i] = zkproto.DecodeID(r)
	}
	if r.Err() == nil {
		slot := recentAuthNext.Add(1) % uint32(len(recentAuth))
		recentAuth[slot].Store(&authList{enc: bytes.Clone(start[:len(start)-r.Len()]), ids: ids})
	}
	return ids
}

// recentAuth holds the identity lists decodeAuth decoded last, replaced
// round robin (recentAuthNext); DecodeTxn may run on any goroutine.
var (
	recentAuth     [8]atomic.Pointer[authList]
	recentAuthNext atomic.Uint32
)

// authList is a decoded identity list and its encoding (count and ids).
type authList struct {
	enc []byte
	ids []zkproto.ID
}

// byteOf reads one byte (a jute boolean is one byte).
func byteOf(r *zkproto.Reader) byte {
	if r.Err() != nil || r.Len() < 1 {
		r.Fail(zkproto.ErrShort)
		return 0
	}
	b := r.Src[0]
	r.Src = r.Src[1:]
	return b
}
