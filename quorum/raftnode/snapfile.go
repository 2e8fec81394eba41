package raftnode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Snapshot files are named snap-%020d by the raft index they were taken at.
// Layout (integers big-endian):
//
//	+------------+-------------+----------------------------+
//	| "ZKSNAP01" | metaLen (4) | meta: raftpb.SnapshotMetadata (index, term, conf state) |
//	+------------+-------------+----------------------------+
//	| state machine bytes (what StateMachine.Snapshot's write func wrote) |
//	+---------------------------------------------------------------------+
//	| dataLen (8) | CRC-32C (4) of metaLen .. the end of the data          |
//	+---------------------------------------------------------------------+
//
// A file is written as snap-….tmp, fsynced and renamed, so a file with the
// final name is complete unless the disk damaged it; the checksum catches
// that, and Start falls back to an older snapshot. The same bytes are the
// Data of the raftpb.Snapshot a leader sends in MsgSnap, so a follower
// checks them and stores them as they came.
const (
	snapPrefix     = "snap-"
	snapMagic      = "ZKSNAP01"
	snapHeaderSize = len(snapMagic) + 4
	snapTrailer    = 8 + 4
	maxSnapMeta    = 64 << 20
)

var errBadSnapshot = errors.New("raftnode: corrupt snapshot")

func snapName(index uint64) string { return fmt.Sprintf("%s%020d", snapPrefix, index) }

// snapInfo locates the state machine bytes inside a checked snapshot.
type snapInfo struct {
	meta    *raftpb.SnapshotMetadata
	dataOff int64
	dataLen int64
}

// writeSnapshotFile writes the snapshot at meta's index into dir with the
// state machine bytes that write produces, durably.
func writeSnapshotFile(dir string, meta *raftpb.SnapshotMetadata, write func(io.Writer) error) (err error) {
	name := snapName(meta.GetIndex())
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("raftnode: write snapshot %s: %w", name, err)
		}
	}()
	if err = encodeSnapshot(f, meta, write); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

// encodeSnapshot writes a whole snapshot in the file layout to w.
func encodeSnapshot(w io.Writer, meta *raftpb.SnapshotMetadata, write func(io.Writer) error) error {
	mb, err := proto.Marshal(meta)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	sum := crc32.New(castagnoli)
	hdr := binary.BigEndian.AppendUint32([]byte(snapMagic), uint32(len(mb)))
	bw.Write(hdr)
	sum.Write(hdr[len(snapMagic):])
	cw := &countWriter{w: io.MultiWriter(bw, sum)}
	cw.Write(mb)
	cw.n = 0
	if err := write(cw); err != nil {
		return err
	}
	trailer := binary.BigEndian.AppendUint64(nil, uint64(cw.n))
	trailer = binary.BigEndian.AppendUint32(trailer, sum.Sum32())
	bw.Write(trailer)
	return bw.Flush()
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// checkSnapshot verifies the snapshot in r (size bytes: a file or the Data
// of a MsgSnap) and returns where its state machine bytes are.
func checkSnapshot(r io.ReaderAt, size int64) (*snapInfo, error) {
	if size < int64(snapHeaderSize+snapTrailer) {
		return nil, fmt.Errorf("%w: %d bytes is too short", errBadSnapshot, size)
	}
	var hdr [snapHeaderSize]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return nil, err
	}
	metaLen := int64(binary.BigEndian.Uint32(hdr[len(snapMagic):]))
	if string(hdr[:len(snapMagic)]) != snapMagic || metaLen > maxSnapMeta ||
		int64(snapHeaderSize)+metaLen+snapTrailer > size {
		return nil, fmt.Errorf("%w: bad header", errBadSnapshot)
	}
	var tr [snapTrailer]byte
	if _, err := r.ReadAt(tr[:], size-snapTrailer); err != nil {
		return nil, err
	}
	info := &snapInfo{dataOff: int64(snapHeaderSize) + metaLen}
	info.dataLen = size - snapTrailer - info.dataOff
	if binary.BigEndian.Uint64(tr[:]) != uint64(info.dataLen) {
		return nil, fmt.Errorf("%w: length mismatch", errBadSnapshot)
	}
	sum := crc32.New(castagnoli)
	if err := hashRange(sum, r, int64(len(snapMagic)), size-snapTrailer); err != nil {
		return nil, err
	}
	if sum.Sum32() != binary.BigEndian.Uint32(tr[8:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errBadSnapshot)
	}
	mb := make([]byte, metaLen)
	if _, err := r.ReadAt(mb, int64(snapHeaderSize)); err != nil {
		return nil, err
	}
	info.meta = &raftpb.SnapshotMetadata{}
	if err := proto.Unmarshal(mb, info.meta); err != nil {
		return nil, fmt.Errorf("%w: metadata: %v", errBadSnapshot, err)
	}
	raftpb.EnsureSnapshotMetadata(info.meta)
	return info, nil
}

func hashRange(h hash.Hash32, r io.ReaderAt, from, to int64) error {
	_, err := io.Copy(h, io.NewSectionReader(r, from, to-from))
	return err
}

// openSnapshot opens and verifies the snapshot file at path. The caller
// closes the file.
func openSnapshot(path string) (*os.File, *snapInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil {
		var info *snapInfo
		if info, err = checkSnapshot(f, st.Size()); err == nil {
			return f, info, nil
		}
	}
	f.Close()
	return nil, nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
}

// snapshotData returns the state machine bytes of a checked snapshot held
// in memory.
func snapshotData(b []byte, info *snapInfo) io.Reader {
	return bytes.NewReader(b[info.dataOff : info.dataOff+info.dataLen])
}

// listSnapshots returns the indexes of the snapshot files in dir, newest
// first. Temporary files are not listed.
func listSnapshots(dir string) ([]uint64, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var idx []uint64
	for _, de := range des {
		name := de.Name()
		if !strings.HasPrefix(name, snapPrefix) || len(name) != len(snapPrefix)+20 {
			continue
		}
		if i, err := strconv.ParseUint(name[len(snapPrefix):], 10, 64); err == nil {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	slices.Reverse(idx)
	return idx, nil
}

// purgeSnapshots removes all but the newest keep snapshot files in dir,
// and leftover temporary files of snapshots that were never finished
// (unless one is being written: pass busy=true to keep them).
func purgeSnapshots(dir string, keep int, busy bool) error {
	idx, err := listSnapshots(dir)
	if err != nil {
		return err
	}
	var errs []error
	if len(idx) > keep {
		for _, i := range idx[keep:] {
			errs = append(errs, os.Remove(filepath.Join(dir, snapName(i))))
		}
	}
	if !busy {
		tmps, _ := filepath.Glob(filepath.Join(dir, snapPrefix+"*.tmp"))
		for _, t := range tmps {
			errs = append(errs, os.Remove(t))
		}
	}
	return errors.Join(errs...)
}
