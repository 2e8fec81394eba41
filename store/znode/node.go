package znode

import (
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/zkafka/zkafka/zkproto"
)

// node is one znode. A node is immutable once it is in the tree: every change
// builds a new node that replaces the old one, so a Clone of the btree keeps
// seeing the old node (copy-on-write at two levels: btree pages and nodes).
//
// The struct is 80 bytes (a Go size class). Key, data, ACL index and aversion
// share one allocation, kd:
//
//	+-----------------------------+-------------+-----------+-----------+
//	| key (klen bytes)            | data        | acl u32LE | avers i32 |
//	+-----------------------------+-------------+-----------+-----------+
//	key   = the path with its last '/' replaced by 0x00 ("/a/b" -> "/a\x00b",
//	        "/" -> "\x00"); see keyOf.
//	acl   = index into Tree.acls; bit 31 set means the data is null (not empty).
//
// Lookup probes (see probe) are nodes whose kd holds only a key.
type node struct {
	kd          string
	czxid       int64
	mzxid       int64
	pzxid       int64
	ctime       int64
	mtime       int64
	owner       int64 // raw ephemeralOwner: a session, containerOwner, a TTL encoding, or 0
	version     int32
	cversion    int32 // ZooKeeper's persisted cversion: the number of child creates
	numChildren int32 // Invariant: the number of nodes whose key starts with childPrefix(path)
	klen        int32
}

const (
	trailerLen = 8
	nullData   = 1 << 31 // in the acl word: the data is null
)

// Special ephemeralOwner values (EphemeralType.java).
const (
	containerOwner = math.MinInt64
	extendedMask   = -0x0100000000000000 // 0xff00000000000000: TTL owner
	reservedMask   = 0x00ffff0000000000
	ttlValueMask   = 0x000000ffffffffff // also the largest TTL (ms)
)

type ownerKind uint8

const (
	kindPersistent ownerKind = iota
	kindEphemeral
	kindContainer
	kindTTL
)

// kindOf classifies a raw ephemeralOwner the way EphemeralType.get does:
// TTL encodings are only recognised when extended types are enabled.
func kindOf(owner int64, extended bool) ownerKind {
	switch {
	case extended && owner&extendedMask == extendedMask && owner&reservedMask == 0:
		return kindTTL
	case owner == containerOwner:
		return kindContainer
	case owner == 0:
		return kindPersistent
	}
	return kindEphemeral
}

func ttlOwner(ttl int64) int64 { return extendedMask | ttl }

// validTTL reports whether ttl is accepted for mode (EphemeralType.validateTTL).
func validTTL(mode zkproto.CreateMode, ttl int64) bool {
	if mode.TTL() {
		return ttl > 0 && ttl <= ttlValueMask
	}
	return ttl < 0
}

func (n *node) key() string  { return n.kd[:n.klen] }
func (n *node) word() uint32 { return le32(n.kd, len(n.kd)-trailerLen) }

func (n *node) aclIndex() uint32 { return n.word() &^ nullData }
func (n *node) aversion() int32  { return int32(le32(n.kd, len(n.kd)-4)) }
func (n *node) dataLen() int     { return len(n.kd) - trailerLen - int(n.klen) }

// data returns the node's data without copying. Callers must not modify it.
func (n *node) data() []byte {
	if n.word()&nullData != 0 {
		return nil
	}
	s := n.kd[n.klen : len(n.kd)-trailerLen]
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// path rebuilds the node's path from its key.
func (n *node) path() string { return pathOf(n.key()) }

// stat returns the Stat a client sees (DataNode.copyStat): cversion counts
// creates and deletes, containers and TTL nodes show ephemeralOwner 0.
func (n *node) stat(extended bool) zkproto.Stat {
	owner := n.owner
	if kindOf(owner, extended) != kindEphemeral {
		owner = 0
	}
	return zkproto.Stat{
		Czxid: n.czxid, Mzxid: n.mzxid, Ctime: n.ctime, Mtime: n.mtime,
		Version: n.version, Cversion: n.cversion*2 - n.numChildren,
		Aversion: n.aversion(), EphemeralOwner: owner,
		DataLength: int32(n.dataLen()), NumChildren: n.numChildren, Pzxid: n.pzxid,
	}
}

// withData returns a copy of n with new data (nil = null).
func (n *node) withData(data []byte) *node {
	c := *n
	c.kd = buildKD(n.key(), data, n.aclIndex(), n.aversion())
	return &c
}

// withACL returns a copy of n with a new ACL index and aversion.
func (n *node) withACL(acl uint32, aversion int32) *node {
	c := *n
	var b strings.Builder
	b.Grow(len(n.kd))
	b.WriteString(n.kd[:len(n.kd)-trailerLen])
	writeTrailer(&b, acl|n.word()&nullData, aversion)
	c.kd = b.String()
	return &c
}

func buildKD(key string, data []byte, acl uint32, aversion int32) string {
	var b strings.Builder
	b.Grow(len(key) + len(data) + trailerLen)
	b.WriteString(key)
	b.Write(data)
	if data == nil {
		acl |= nullData
	}
	writeTrailer(&b, acl, aversion)
	return b.String()
}

func writeTrailer(b *strings.Builder, acl uint32, aversion int32) {
	v := uint32(aversion)
	b.Write([]byte{byte(acl), byte(acl >> 8), byte(acl >> 16), byte(acl >> 24),
		byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
}

func le32(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// keyOf returns the btree key of a path that contains a '/'. Replacing the
// last '/' by 0x00 orders keys by (parent path, child name), so the children
// of a node are one contiguous key range, parents sort before their children,
// and the descendants of P are two ranges: P+"\x00"... and P+"/"... .
func keyOf(path string) string {
	s := strings.LastIndexByte(path, '/')
	return path[:s] + "\x00" + path[s+1:]
}

// pathOf inverts keyOf for a stored key (exactly one 0x00 byte).
func pathOf(key string) string {
	i := strings.IndexByte(key, 0)
	return key[:i] + "/" + key[i+1:]
}

// parentOf returns the parent path of a path that contains a '/'; the parent
// of a top-level node is "" (ZooKeeper's alias of the root).
func parentOf(path string) string { return path[:strings.LastIndexByte(path, '/')] }

// eventPath maps the root alias "" to "/".
func eventPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// seqSuffix formats a sequence number like Java's %010d.
func seqSuffix(c int32) string {
	s := strconv.FormatInt(int64(c), 10)
	neg := c < 0
	if neg {
		s = s[1:]
	}
	w := 10
	if neg {
		w = 9
	}
	if len(s) < w {
		s = strings.Repeat("0", w-len(s)) + s
	}
	if neg {
		return "-" + s
	}
	return s
}
