package apachezk

import (
	"bufio"
	"fmt"
	"hash/adler32"
	"os"
	"path/filepath"

	"github.com/zkafka/zkafka/zkproto"
)

// LogWriter writes a txn log file as FileTxnLog does (without the
// preallocated zeros and without TxnDigests): for tests and benchmarks
// that need large logs without running ZooKeeper.
type LogWriter struct {
	f   *os.File
	w   *bufio.Writer
	buf []byte
	err error
}

// CreateLog creates dir/log.<firstZxid> and writes its header.
func CreateLog(dir string, firstZxid int64) (*LogWriter, error) {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("log.%x", firstZxid)))
	if err != nil {
		return nil, err
	}
	l := &LogWriter{f: f, w: bufio.NewWriterSize(f, 256<<10)}
	hdr := append([]byte(logMagic), 0, 0, 0, 2)
	_, l.err = l.w.Write(zkproto.AppendLong(hdr, 0))
	return l, nil
}

func (l *LogWriter) entry(session, zxid, time int64, typ zkproto.OpCode, body func([]byte) []byte) {
	b := zkproto.AppendLong(l.buf[:0], session)
	b = zkproto.AppendInt(b, 0)
	b = zkproto.AppendLong(zkproto.AppendLong(b, zxid), time)
	b = body(zkproto.AppendInt(b, int32(typ)))
	l.buf = b
	if l.err != nil {
		return
	}
	rec := zkproto.AppendBuffer(zkproto.AppendLong(nil, int64(adler32.Checksum(b))), b)
	_, l.err = l.w.Write(append(rec, 'B'))
}

// Create appends a create txn of a persistent node.
func (l *LogWriter) Create(session, zxid, time int64, path string, data []byte, acl []zkproto.ACL, parentCVersion int32) {
	l.entry(session, zxid, time, zkproto.OpCreate, func(b []byte) []byte {
		b = zkproto.AppendACLs(zkproto.AppendBuffer(zkproto.AppendString(b, path), data), acl)
		return zkproto.AppendInt(zkproto.AppendBool(b, false), parentCVersion)
	})
}

// SetData appends a setData txn (version is the node's new version).
func (l *LogWriter) SetData(session, zxid, time int64, path string, data []byte, version int32) {
	l.entry(session, zxid, time, zkproto.OpSetData, func(b []byte) []byte {
		return zkproto.AppendInt(zkproto.AppendBuffer(zkproto.AppendString(b, path), data), version)
	})
}

// Close flushes, syncs and closes the file.
func (l *LogWriter) Close() error {
	err := l.err
	if err == nil {
		err = l.w.Flush()
	}
	if err == nil {
		err = l.f.Sync()
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
