package quorum

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
)

// raftDir is where a server keeps its raft log, snapshots and state file.
func (c *Config) raftDir() string { return filepath.Join(c.DataLogDir, "version-2") }

// ImportTree makes t the starting state of the server that cfg describes
// (an imported Apache ZooKeeper tree): its data directory, which must hold
// no zkafka data yet, gets a raft snapshot of t at index t.LastZxid, so
// the raft log, and with it every zxid given out later, starts after the
// last imported zxid (the zxid of a txn is its raft index). The directory
// appears only once complete. Every member of an ensemble imports the same
// tree, or starts empty and receives the snapshot from the leader.
func ImportTree(cfg Config, t *znode.Tree) error {
	cfg.fillDerived()
	if t.LastZxid() <= 0 {
		return fmt.Errorf("quorum: import: the tree's last zxid is %d", t.LastZxid())
	}
	peers := []raftnode.Peer{{ID: max(cfg.MyID, 1)}}
	if len(cfg.Servers) > 0 {
		peers = peers[:0]
		for _, sp := range cfg.Servers {
			peers = append(peers, raftnode.Peer{ID: sp.ID, Learner: sp.Observer})
		}
	}
	if err := os.MkdirAll(cfg.DataLogDir, 0o755); err != nil {
		return err
	}
	err := raftnode.Seed(cfg.raftDir(), peers, uint64(t.LastZxid()), t.WriteSnapshot)
	if errors.Is(err, raftnode.ErrNotEmpty) {
		err = fmt.Errorf("%w (an import needs a dataDir, or dataLogDir, with no version-2 yet: not the Apache ZooKeeper dataDir itself, nor one zkafka already ran on)", err)
	}
	return err
}

// ExportTree reads the tree of a stopped server from its data directory:
// its newest snapshot and the committed log after it (raftnode.Replay). It
// returns the tree and the zxid it is at (the last raft index covered,
// which may be above the tree's LastZxid: raft's own entries have zxids
// too).
func ExportTree(cfg Config) (*znode.Tree, int64, error) {
	cfg.fillDerived()
	opts := TreeOptions(cfg)
	tree := znode.New(opts)
	restore := func(r io.Reader) error {
		t, err := znode.ReadSnapshot(r, opts)
		if err == nil {
			tree = t
		}
		return err
	}
	var applyErr error
	apply := func(index uint64, data []byte) {
		txn, err := znode.DecodeTxn(data)
		if err != nil {
			applyErr = fmt.Errorf("quorum: export: log entry %d: %w", index, err)
			return
		}
		txn.Zxid = int64(index)
		tree.Apply(txn)
	}
	last, err := raftnode.Replay(cfg.raftDir(), restore, apply)
	if err == nil {
		err = applyErr
	}
	if err != nil {
		return nil, 0, err
	}
	return tree, max(int64(last), tree.LastZxid()), nil
}

// TreeOptions are the options of the tree a server with cfg keeps
// (jute.maxbuffer, extended types): an imported tree is built with them.
func TreeOptions(cfg Config) znode.Options { return (&Server{cfg: cfg}).treeOptions() }
