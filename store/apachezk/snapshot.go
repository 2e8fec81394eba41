package apachezk

import (
	"bufio"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"os"
	"path/filepath"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

const (
	snapMagic = "ZKSN"
	logMagic  = "ZKLG"
	// openACL is ReferenceCountedACLCache.OPEN_UNSAFE_ACL_ID.
	openACL = -1
)

// readSnapshotFile loads the snapshot at path (FileSnap.deserialize): the
// sessions, the ACL cache, the nodes, the seal and, if present, the digest
// and its seal. zxid is the one in the file's name.
func readSnapshotFile(path string, zxid int64) (*DataTree, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	r := newReader(f, st.Size())
	dt, err := readSnapshot(r)
	if err == nil {
		err = r.err
	}
	if err != nil {
		at := r.at
		if r.err == nil {
			at = r.off
		}
		if err == errTruncated {
			err = fmt.Errorf("%w: truncated", ErrCorrupt)
		}
		return nil, &Error{File: filepath.Base(path), Offset: at, Err: err}
	}
	dt.LastZxid = zxid
	return dt, nil
}

func readSnapshot(r *reader) (*DataTree, error) {
	r.fileHeader(snapMagic)
	dt := newDataTree()
	for n := r.count(12); n > 0 && r.err == nil; n-- {
		id := r.long()
		dt.Sessions[id] = r.int()
	}
	acls := map[int64][]zkproto.ACL{}
	for n := r.count(12); n > 0 && r.err == nil; n-- {
		id := r.long()
		acls[id] = r.acls()
	}
	for r.err == nil {
		at := r.off
		path := r.str()
		if r.err != nil || path == "/" {
			break
		}
		n := &Node{Data: r.buffer()}
		aclID := r.long()
		s := &n.Stat
		s.Czxid, s.Mzxid, s.Ctime, s.Mtime = r.long(), r.long(), r.long(), r.long()
		s.Version, s.Cversion, s.Aversion = r.int(), r.int(), r.int()
		s.EphemeralOwner, s.Pzxid = r.long(), r.long()
		if r.err != nil {
			break
		}
		if aclID == openACL {
			n.ACL = zkproto.OpenACLUnsafe
		} else if n.ACL = acls[aclID]; n.ACL == nil {
			r.fail(fmt.Errorf("%w: node %q has ACL %d, not in the ACL cache", ErrCorrupt, path, aclID))
			r.at = at
			break
		}
		if err := dt.add(path, n); err != nil {
			r.fail(err)
			r.at = at
		}
	}
	if r.err == nil && dt.Nodes[""] == nil {
		r.fail(fmt.Errorf("%w: no root node", ErrCorrupt))
	}
	r.seal()
	if r.err == nil && r.off < r.size {
		// The zxid digest of 3.6+, sealed again.
		r.long()
		if v := r.int(); v < 2 {
			r.str() // digest versions before 2 are a hex string
		} else {
			r.long()
		}
		r.seal()
	}
	return dt, r.err
}

// WriteSnapshot writes t as ZooKeeper 3.8 writes a snapshot: the
// sessions, an ACL cache of the lists in use, every node parents first,
// the seal, an empty digest (ZooKeeper then checks none) and its seal.
func WriteSnapshot(w io.Writer, t *znode.Tree) error {
	sw := &snapWriter{w: bufio.NewWriterSize(w, 256<<10), sum: adler32.New()}
	b := append([]byte(snapMagic), 0, 0, 0, 2)
	b = zkproto.AppendLong(b, -1) // dbid, as FileSnap writes it
	sessions := t.SessionList()
	b = zkproto.AppendInt(b, int32(len(sessions)))
	for _, s := range sessions {
		b = zkproto.AppendInt(zkproto.AppendLong(b, s.ID), s.Timeout)
	}
	sw.write(b)
	// The ACL cache: ids 1.. in order of first use.
	ids := map[string]int64{}
	var lists [][]zkproto.ACL
	t.Records(func(rec znode.Record) bool {
		k := string(zkproto.AppendACLs(nil, rec.ACL))
		if _, ok := ids[k]; !ok {
			lists = append(lists, rec.ACL)
			ids[k] = int64(len(lists))
		}
		return true
	})
	b = zkproto.AppendInt(b[:0], int32(len(lists)))
	for i, l := range lists {
		b = zkproto.AppendACLs(zkproto.AppendLong(b, int64(i+1)), l)
	}
	sw.write(b)
	t.Records(func(rec znode.Record) bool {
		path := rec.Path
		if path == "/" {
			path = ""
		}
		b = zkproto.AppendBuffer(zkproto.AppendString(b[:0], path), rec.Data)
		b = zkproto.AppendLong(b, ids[string(zkproto.AppendACLs(nil, rec.ACL))])
		for _, v := range [...]int64{rec.Czxid, rec.Mzxid, rec.Ctime, rec.Mtime} {
			b = zkproto.AppendLong(b, v)
		}
		b = zkproto.AppendInt(zkproto.AppendInt(zkproto.AppendInt(b, rec.Version), rec.Cversion), rec.Aversion)
		b = zkproto.AppendLong(zkproto.AppendLong(b, rec.Owner), rec.Pzxid)
		sw.write(b)
		return sw.err == nil
	})
	sw.write(zkproto.AppendString(b[:0], "/"))
	sw.seal()
	// An empty ZxidDigest: zxid 0, digest version 2, digest 0.
	sw.write(zkproto.AppendLong(zkproto.AppendInt(zkproto.AppendLong(b[:0], 0), 2), 0))
	sw.seal()
	if sw.err != nil {
		return sw.err
	}
	return sw.w.Flush()
}

type snapWriter struct {
	w   *bufio.Writer
	sum hash.Hash32
	err error
}

func (sw *snapWriter) write(b []byte) {
	if sw.err != nil {
		return
	}
	sw.sum.Write(b)
	_, sw.err = sw.w.Write(b)
}

func (sw *snapWriter) seal() {
	sw.write(zkproto.AppendString(zkproto.AppendLong(nil, int64(sw.sum.Sum32())), "/"))
}

// WriteSnapshotFile writes t into dir/version-2 as snapshot.<zxid> (the
// directory is created), through a temporary file renamed once complete.
// It returns the file's path.
func WriteSnapshotFile(dir string, t *znode.Tree, zxid int64) (string, error) {
	v2 := filepath.Join(dir, "version-2")
	if err := os.MkdirAll(v2, 0o755); err != nil {
		return "", err
	}
	name := filepath.Join(v2, fmt.Sprintf("snapshot.%x", zxid))
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	err = WriteSnapshot(f, t)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return name, nil
}
