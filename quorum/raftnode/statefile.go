package raftnode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"

	"go.etcd.io/raft/v3/raftpb"
)

// stateFileName is the small file that holds the HardState and the
// bootstrap membership. Layout (integers big-endian):
//
//	+-----------+-------------+----------+----------+------------+
//	| "ZKRAFTST"| version (4) | term (8) | vote (8) | commit (8) |
//	+-----------+-------------+----------+----------+------------+
//	| voters: count (4), ids (8 each) | learners: count (4), ids  |
//	+---------------------------------+---------------------------+
//	| CRC-32C (4) of everything before it                         |
//	+-------------------------------------------------------------+
//
// It is replaced atomically (write a temporary file, fsync, rename, fsync
// the directory). The membership is the one the cluster was bootstrapped
// with (Config.Peers at the first start); later changes are conf-change
// entries in the log and snapshots.
const stateFileName = "raftstate"

const (
	stateMagic   = "ZKRAFTST"
	stateVersion = 1
	// maxStatePeers bounds the peer counts read from the file.
	maxStatePeers = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// persistedState is the content of the state file.
type persistedState struct {
	Term, Vote, Commit uint64
	Voters, Learners   []uint64 // the bootstrap membership
}

func (s *persistedState) hardState() *raftpb.HardState {
	return &raftpb.HardState{Term: new(s.Term), Vote: new(s.Vote), Commit: new(s.Commit)}
}

func (s *persistedState) confState() *raftpb.ConfState {
	return raftpb.EnsureConfState(&raftpb.ConfState{Voters: s.Voters, Learners: s.Learners})
}

func (s *persistedState) marshal() []byte {
	b := make([]byte, 0, 64+8*(len(s.Voters)+len(s.Learners)))
	b = append(b, stateMagic...)
	b = binary.BigEndian.AppendUint32(b, stateVersion)
	b = binary.BigEndian.AppendUint64(b, s.Term)
	b = binary.BigEndian.AppendUint64(b, s.Vote)
	b = binary.BigEndian.AppendUint64(b, s.Commit)
	b = appendIDs(b, s.Voters)
	b = appendIDs(b, s.Learners)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func appendIDs(b []byte, ids []uint64) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(ids)))
	for _, id := range ids {
		b = binary.BigEndian.AppendUint64(b, id)
	}
	return b
}

var errBadState = errors.New("raftnode: corrupt state file")

func unmarshalState(b []byte) (*persistedState, error) {
	const fixed = len(stateMagic) + 4 + 3*8
	if len(b) < fixed+4+4+4 || string(b[:len(stateMagic)]) != stateMagic {
		return nil, fmt.Errorf("%w: bad magic or size", errBadState)
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", errBadState)
	}
	if v := binary.BigEndian.Uint32(body[8:]); v != stateVersion {
		return nil, fmt.Errorf("%w: version %d", errBadState, v)
	}
	s := &persistedState{
		Term:   binary.BigEndian.Uint64(body[12:]),
		Vote:   binary.BigEndian.Uint64(body[20:]),
		Commit: binary.BigEndian.Uint64(body[28:]),
	}
	rest := body[fixed:]
	var ok bool
	if s.Voters, rest, ok = readIDs(rest); !ok {
		return nil, fmt.Errorf("%w: bad voters", errBadState)
	}
	if s.Learners, rest, ok = readIDs(rest); !ok || len(rest) != 0 {
		return nil, fmt.Errorf("%w: bad learners", errBadState)
	}
	return s, nil
}

func readIDs(b []byte) ([]uint64, []byte, bool) {
	if len(b) < 4 {
		return nil, b, false
	}
	n := binary.BigEndian.Uint32(b)
	b = b[4:]
	if n > maxStatePeers || uint64(len(b)) < 8*uint64(n) {
		return nil, b, false
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	return ids, b[8*n:], true
}

// readState reads the state file in dir; it returns (nil, nil) if there is
// none (a first start).
func readState(dir string) (*persistedState, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return unmarshalState(b)
}

// writeState replaces the state file in dir, durably.
func writeState(dir string, s *persistedState) error {
	return writeFileAtomic(dir, stateFileName, s.marshal())
}

// writeFileAtomic replaces dir/name with data: it writes name.tmp, fsyncs
// it, renames it over name and fsyncs dir.
func writeFileAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("raftnode: write %s: %w", name, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
