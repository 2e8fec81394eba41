package znode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/zkafka/zkafka/zkproto"
)

// Snapshot format (big-endian jute primitives), CRC-32C over every byte
// before the trailer:
//
//	magic "ZKFTREE\x02" | lastZxid i64
//	acls:     count i32, then per list: ACL vector (as zkproto.AppendACLs)
//	sessions: count i32, then per session: id i64 | timeout i32 | owner i64
//	          (version 1, "ZKFTREE\x01", has no owner: it reads as 0)
//	nodes:    count i64, then per node in key order (parents first):
//	          path ustring | data buffer (-1 = null) | acl i32 | czxid i64 | mzxid i64
//	          | pzxid i64 | ctime i64 | mtime i64 | owner i64 | version i32
//	          | cversion i32 (creates of children) | aversion i32
//	crc32c u32
//
// numChildren is not stored: loading recounts it.
var snapMagic = [8]byte{'Z', 'K', 'F', 'T', 'R', 'E', 'E', 2}

// snapMagicV1 is the format before session owners; ReadSnapshot reads it.
var snapMagicV1 = [8]byte{'Z', 'K', 'F', 'T', 'R', 'E', 'E', 1}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by every ReadSnapshot error about the content.
var ErrCorrupt = errors.New("znode: corrupt snapshot")

// maxSnapString bounds one path or data length read from a snapshot.
const maxSnapString = 64 << 20

// WriteSnapshot writes t to w. It holds t's read lock for the whole write,
// so call it on a Clone to keep applying writes meanwhile.
func (t *Tree) WriteSnapshot(w io.Writer) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	sw := &snapWriter{w: bufio.NewWriterSize(w, 64<<10)}
	b := append([]byte(nil), snapMagic[:]...)
	b = zkproto.AppendLong(b, t.lastZxid)
	b = zkproto.AppendInt(b, int32(len(t.acls)))
	sw.write(b)
	for _, l := range t.acls {
		sw.write(zkproto.AppendACLs(sw.scratch[:0], l))
	}
	sw.write(zkproto.AppendInt(sw.scratch[:0], int32(t.sessions.Len())))
	t.sessions.Ascend(func(s sessionRec) bool {
		sw.write(zkproto.AppendLong(zkproto.AppendInt(zkproto.AppendLong(sw.scratch[:0], s.id), s.timeout), s.owner))
		return sw.err == nil
	})
	sw.write(zkproto.AppendLong(sw.scratch[:0], int64(t.nodes.Len())))
	t.nodes.Ascend(func(n *node) bool {
		sw.write(appendNode(sw.scratch[:0], n))
		return sw.err == nil
	})
	if sw.err != nil {
		return sw.err
	}
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], sw.crc)
	if _, err := sw.w.Write(crc[:]); err != nil {
		return err
	}
	return sw.w.Flush()
}

func appendNode(b []byte, n *node) []byte {
	b = zkproto.AppendString(b, n.path())
	b = zkproto.AppendBuffer(b, n.data())
	b = zkproto.AppendInt(b, int32(n.aclIndex()))
	for _, v := range [...]int64{n.czxid, n.mzxid, n.pzxid, n.ctime, n.mtime, n.owner} {
		b = zkproto.AppendLong(b, v)
	}
	b = zkproto.AppendInt(b, n.version)
	b = zkproto.AppendInt(b, n.cversion)
	return zkproto.AppendInt(b, n.aversion())
}

type snapWriter struct {
	w       *bufio.Writer
	crc     uint32
	err     error
	scratch []byte
}

func (sw *snapWriter) write(b []byte) {
	sw.scratch = b[:0]
	if sw.err != nil {
		return
	}
	sw.crc = crc32.Update(sw.crc, crcTable, b)
	_, sw.err = sw.w.Write(b)
}

// ReadSnapshot loads a tree written by WriteSnapshot. It checks the
// checksum and the tree's structure (every node's parent precedes it, ACL
// indexes are in range) and never panics on bad input. Bytes after the
// checksum are not read.
func ReadSnapshot(r io.Reader, opts Options) (*Tree, error) {
	sr := &snapReader{r: bufio.NewReaderSize(r, 64<<10)}
	t, err := sr.tree(opts)
	if err == nil {
		err = sr.err
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: truncated", ErrCorrupt)
		}
		return nil, err
	}
	want := sr.crc
	var crc [4]byte
	if _, err := io.ReadFull(sr.r, crc[:]); err != nil {
		return nil, fmt.Errorf("%w: truncated checksum", ErrCorrupt)
	}
	if binary.BigEndian.Uint32(crc[:]) != want {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return t, nil
}

func (sr *snapReader) tree(opts Options) (*Tree, error) {
	var magic [8]byte
	sr.full(magic[:])
	if sr.err == nil && magic != snapMagic && magic != snapMagicV1 {
		return nil, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	owners := magic == snapMagic
	t := newEmpty(opts)
	t.lastZxid = sr.long()
	if err := sr.acls(t); err != nil {
		return nil, err
	}
	for n := sr.count(); n > 0 && sr.err == nil; n-- {
		rec := sessionRec{id: sr.long(), timeout: sr.int()}
		if owners {
			rec.owner = sr.long()
		}
		t.sessions.ReplaceOrInsert(rec)
	}
	count := sr.long()
	if count < 0 {
		return nil, fmt.Errorf("%w: node count %d", ErrCorrupt, count)
	}
	remap := make([]int64, len(t.acls)) // old index → new index+1, 0 = unused yet
	used := t.acls
	t.acls = nil
	for ; count > 0 && sr.err == nil; count-- {
		if err := sr.node(t, used, remap); err != nil {
			return nil, err
		}
	}
	if sr.err == nil && t.get("/") == nil {
		return nil, fmt.Errorf("%w: no root", ErrCorrupt)
	}
	return t, sr.err
}

func (sr *snapReader) acls(t *Tree) error {
	for n := sr.count(); n > 0 && sr.err == nil; n-- {
		var l []zkproto.ACL
		for m := sr.count(); m > 0 && sr.err == nil; m-- {
			perms := sr.int()
			l = append(l, zkproto.ACL{Perms: perms, ID: zkproto.ID{Scheme: sr.str(), ID: sr.str()}})
		}
		t.acls = append(t.acls, l)
	}
	return sr.err
}

// node reads one node, remaps its ACL index to the compacted table and
// links it to its parent, which must already be loaded.
func (sr *snapReader) node(t *Tree, acls [][]zkproto.ACL, remap []int64) error {
	path := sr.str()
	data := sr.buffer()
	aclIdx := sr.int()
	var v [6]int64
	for i := range v {
		v[i] = sr.long()
	}
	version, cversion, aversion := sr.int(), sr.int(), sr.int()
	if sr.err != nil {
		return sr.err
	}
	if aclIdx < 0 || int(aclIdx) >= len(acls) || (path != "/" && !ValidatePath(path)) || path == "" {
		return fmt.Errorf("%w: node %q", ErrCorrupt, path)
	}
	if remap[aclIdx] == 0 {
		t.acls = append(t.acls, acls[aclIdx])
		remap[aclIdx] = int64(len(t.acls))
	}
	key := keyOf(path)
	n := &node{kd: buildKD(key, data, uint32(remap[aclIdx]-1), aversion), klen: int32(len(key)),
		czxid: v[0], mzxid: v[1], pzxid: v[2], ctime: v[3], mtime: v[4], owner: v[5],
		version: version, cversion: cversion}
	if t.nodes.Has(n) {
		return fmt.Errorf("%w: duplicate node %q", ErrCorrupt, path)
	}
	if path != "/" {
		parent := t.get(parentOf(path))
		if parent == nil {
			return fmt.Errorf("%w: orphan node %q", ErrCorrupt, path)
		}
		parent.numChildren++ // not shared yet: the tree is being built
	}
	t.replace(nil, n)
	return nil
}

type snapReader struct {
	r   *bufio.Reader
	crc uint32
	err error
	buf [8]byte
}

func (sr *snapReader) full(b []byte) {
	if sr.err != nil {
		clear(b)
		return
	}
	if _, err := io.ReadFull(sr.r, b); err != nil {
		sr.err = err
		clear(b)
		return
	}
	sr.crc = crc32.Update(sr.crc, crcTable, b)
}

func (sr *snapReader) long() int64 {
	sr.full(sr.buf[:8])
	return int64(binary.BigEndian.Uint64(sr.buf[:8]))
}

func (sr *snapReader) int() int32 {
	sr.full(sr.buf[:4])
	return int32(binary.BigEndian.Uint32(sr.buf[:4]))
}

// count reads a vector count; -1 (null) is 0, other negatives are corrupt.
func (sr *snapReader) count() int32 {
	n := sr.int()
	if n < -1 && sr.err == nil {
		sr.err = fmt.Errorf("%w: count %d", ErrCorrupt, n)
	}
	return max(n, 0)
}

// buffer reads a jute buffer, growing as bytes arrive so that a corrupt
// length cannot make it allocate more than the input holds (plus 64 KiB).
func (sr *snapReader) buffer() []byte {
	n := sr.int()
	if sr.err != nil || n == -1 {
		return nil
	}
	if n < -1 || n > maxSnapString {
		sr.err = fmt.Errorf("%w: length %d", ErrCorrupt, n)
		return nil
	}
	b := make([]byte, 0, min(int(n), 64<<10))
	for len(b) < int(n) && sr.err == nil {
		chunk := min(int(n)-len(b), 64<<10)
		b = append(b, make([]byte, chunk)...)
		sr.full(b[len(b)-chunk:])
	}
	return b
}

func (sr *snapReader) str() string { return string(sr.buffer()) }
