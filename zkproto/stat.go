package zkproto

import (
	"bytes"
	"encoding/binary"
)

// Stat is the stat structure of a znode, as ZooKeeper keeps it.
type Stat struct {
	Czxid          int64 // zxid of the create
	Mzxid          int64 // zxid of the last data change
	Ctime          int64 // create time, ms since the epoch
	Mtime          int64 // last data change time, ms
	Version        int32 // data version
	Cversion       int32 // children version: creates and deletes of children
	Aversion       int32 // ACL version
	EphemeralOwner int64 // session id of an ephemeral's owner, else 0
	DataLength     int32
	NumChildren    int32
	Pzxid          int64 // zxid of the last child create or delete
}

// StatSize is the encoded size of a Stat.
const StatSize = 8*4 + 4*3 + 8 + 4*2 + 8

// Append appends s in jute order.
func (s *Stat) Append(dst []byte) []byte {
	dst = AppendLong(dst, s.Czxid)
	dst = AppendLong(dst, s.Mzxid)
	dst = AppendLong(dst, s.Ctime)
	dst = AppendLong(dst, s.Mtime)
	dst = AppendInt(dst, s.Version)
	dst = AppendInt(dst, s.Cversion)
	dst = AppendInt(dst, s.Aversion)
	dst = AppendLong(dst, s.EphemeralOwner)
	dst = AppendInt(dst, s.DataLength)
	dst = AppendInt(dst, s.NumChildren)
	return AppendLong(dst, s.Pzxid)
}

// Decode reads s from r.
func (s *Stat) Decode(r *Reader) {
	s.Czxid = r.Long()
	s.Mzxid = r.Long()
	s.Ctime = r.Long()
	s.Mtime = r.Long()
	s.Version = r.Int()
	s.Cversion = r.Int()
	s.Aversion = r.Int()
	s.EphemeralOwner = r.Long()
	s.DataLength = r.Int()
	s.NumChildren = r.Int()
	s.Pzxid = r.Long()
}

// ID is an authentication identity: a scheme and an id within it.
type ID struct {
	Scheme string
	ID     string
}

// ACL grants Perms to an identity.
type ACL struct {
	Perms int32
	ID    ID
}

// Well-known ACLs (ZooDefs.Ids).
var (
	OpenACLUnsafe  = []ACL{{Perms: PermAll, ID: ID{Scheme: "world", ID: "anyone"}}}
	CreatorAllACL  = []ACL{{Perms: PermAll, ID: ID{Scheme: "auth", ID: ""}}}
	ReadACLUnsafe  = []ACL{{Perms: PermRead, ID: ID{Scheme: "world", ID: "anyone"}}}
	AnyoneIDUnsafe = ID{Scheme: "world", ID: "anyone"}
)

// AppendID appends an Id record.
func AppendID(dst []byte, id ID) []byte {
	return AppendString(AppendString(dst, id.Scheme), id.ID)
}

// DecodeID reads an Id record.
func DecodeID(r *Reader) ID { return ID{Scheme: r.String(), ID: r.String()} }

// AppendACLs appends a vector of ACL records.
func AppendACLs(dst []byte, acls []ACL) []byte {
	dst = AppendInt(dst, int32(len(acls)))
	for _, a := range acls {
		dst = AppendInt(dst, a.Perms)
		dst = AppendID(dst, a.ID)
	}
	return dst
}

// DecodeACLs reads a vector of ACL records. The list world:anyone with one
// perms value, which nearly every request carries, comes back as a shared
// list instead of three fresh allocations: callers must not modify the
// result (none does; the tree copies a list it keeps, see znode.internACL).
func DecodeACLs(r *Reader) []ACL {
	n := r.VectorLen(12)
	if n == 0 {
		return nil
	}
	if n == 1 {
		if acl, ok := r.worldACL(); ok {
			return acl
		}
	}
	out := make([]ACL, n)
	for i := range out {
		out[i].Perms = r.Int()
		out[i].ID = DecodeID(r)
	}
	return out
}

// worldACLs[p] is the shared list world:anyone with perms p, for each p a
// perms mask can hold. Each has capacity 1, so an append copies it.
var worldACLs = func() (t [PermAll + 1][]ACL) {
	for p := range t {
		t[p] = []ACL{{Perms: int32(p), ID: AnyoneIDUnsafe}}
	}
	return t
}()

// worldIDRecord is the encoded ID world:anyone.
var worldIDRecord = AppendID(nil, AnyoneIDUnsafe)

// worldACL reads one ACL record if it is world:anyone with perms in
// 0..PermAll, returning the shared list of it; otherwise it reads nothing.
func (r *Reader) worldACL() ([]ACL, bool) {
	if r.err != nil || len(r.Src) < 4+len(worldIDRecord) || !bytes.Equal(r.Src[4:4+len(worldIDRecord)], worldIDRecord) {
		return nil, false
	}
	perms := binary.BigEndian.Uint32(r.Src)
	if perms > uint32(PermAll) {
		return nil, false
	}
	r.Src = r.Src[4+len(worldIDRecord):]
	return worldACLs[perms], true
}
