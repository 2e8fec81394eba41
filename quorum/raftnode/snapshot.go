package raftnode

import (
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// snapResult is what the background snapshot writer reports to the loop.
type snapResult struct {
	meta *raftpb.SnapshotMetadata
	err  error
}

// maybeSnapshot starts a snapshot once SnapshotEntries entries have been
// applied since the last one, unless one is being written. The state
// machine captures its state on the loop goroutine (so the capture is at
// exactly the applied index); the capture is serialized, fsynced and
// renamed into place on another goroutine, which reports to the loop.
func (n *Node) maybeSnapshot() {
	applied := n.applied.Load()
	if n.snapping || applied-n.lastSnap < n.cfg.SnapshotEntries {
		return
	}
	term, err := n.st.Term(applied)
	if err != nil {
		n.logger.Warn("raftnode: no term for the snapshot index", "index", applied, "err", err)
		return
	}
	meta := &raftpb.SnapshotMetadata{
		Index:     new(applied),
		Term:      new(term),
		ConfState: proto.Clone(n.confState).(*raftpb.ConfState),
	}
	write := n.sm.Snapshot()
	n.snapping = true
	n.bg.Go(func() {
		err := writeSnapshotFile(n.cfg.Dir, meta, write)
		n.snapc <- snapResult{meta: meta, err: err}
	})
}

// snapshotDone compacts the log behind a snapshot that is now on disk and
// removes the snapshots beyond SnapshotRetain.
func (n *Node) snapshotDone(res snapResult) {
	n.snapping = false
	index := res.meta.GetIndex()
	n.lastSnap = max(n.lastSnap, index) // after a failure, retry SnapshotEntries later
	if res.err != nil {
		n.logger.Error("raftnode: snapshot failed", "index", index, "err", res.err)
		return
	}
	if err := purgeSnapshots(n.cfg.Dir, n.cfg.SnapshotRetain, false); err != nil {
		n.logger.Warn("raftnode: purge old snapshots", "err", err)
	}
	keepFrom := index + 1
	if kept, err := listSnapshots(n.cfg.Dir); err == nil && len(kept) > 0 {
		keepFrom = min(keepFrom, kept[len(kept)-1]+1)
	}
	if err := n.st.compact(res.meta, n.cfg.SnapshotMargin, keepFrom); err != nil {
		n.logger.Error("raftnode: compact the log", "index", index, "err", err)
	}
	n.logger.Info("raftnode: snapshot written", "index", index, "logStart", n.st.log.FirstIndex())
}
