package broker

import (
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/kproto"
)

// Offsets committed inside a transaction (TxnOffsetCommit, key 28) wait
// in ZooKeeper until the transaction ends, beside the group's offsets:
//
//	/consumers/{group}/txn-offsets/{producer id}   persistent: txnOffsetsZNode (JSON)
//
// TxnOffsetCommit writes the node (merging into what the transaction
// committed before) before it answers, so the pending offsets survive a
// failover of the group's coordinator. When the transaction's marker
// reaches the group's partition of __consumer_offsets, the partition's
// WriteTxnMarkers handler calls completeTxnOffsets: on commit the
// offsets go through the group's commit pipeline (g.writeOffsets) and
// become visible, on abort they are dropped; the node is deleted after.
//
// Unlike Kafka, where the marker and the offsets are one log, these are
// two ZooKeeper writes: a crash between them leaves the node, and the
// coordinator resends the unanswered marker, which writes the same
// offsets again and then deletes it.

func txnOffsetsDir(group string) string { return groupPath(group) + "/txn-offsets" }
func txnOffsetsPath(group string, producerID int64) string {
	return txnOffsetsDir(group) + "/" + strconv.FormatInt(producerID, 10)
}

// txnOffsetsZNode is the content of /consumers/{group}/txn-offsets/{pid}.
type txnOffsetsZNode struct {
	ProducerEpoch int16             `json:"producer_epoch"`
	Offsets       []txnOffsetZEntry `json:"offsets"`
}

type txnOffsetZEntry struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Metadata    string `json:"metadata"`
}

// txnOffsetIndex remembers which groups have pending offsets of which
// producer, for the __consumer_offsets partitions this broker leads; a
// partition's entries are rebuilt from ZooKeeper (scan) the first time a
// marker for it arrives in a leader epoch.
type txnOffsetIndex struct {
	mu      sync.Mutex
	groups  map[int64]map[string]bool // producer id → groups
	scanned map[int32]int32           // offsets partition → leader epoch scanned in
}

func (x *txnOffsetIndex) add(producerID int64, group string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.groups == nil {
		x.groups = map[int64]map[string]bool{}
	}
	if x.groups[producerID] == nil {
		x.groups[producerID] = map[string]bool{}
	}
	x.groups[producerID][group] = true
}

func (x *txnOffsetIndex) remove(producerID int64, group string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.groups[producerID], group)
	if len(x.groups[producerID]) == 0 {
		delete(x.groups, producerID)
	}
}

// pending lists the groups of partition p with pending offsets of
// producerID.
func (x *txnOffsetIndex) pending(producerID int64, p int32, n int) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []string
	for g := range x.groups[producerID] {
		if offsetsPartitionOf(g, n) == p {
			out = append(out, g)
		}
	}
	return out
}

// scanTxnOffsets fills the index for offsets partition p from ZooKeeper
// once per leader epoch (the pending nodes a previous coordinator wrote).
func (b *Broker) scanTxnOffsets(p int32, n int, epoch int32) error {
	b.txnOffsets.mu.Lock()
	done := b.txnOffsets.scanned != nil && b.txnOffsets.scanned[p] == epoch
	b.txnOffsets.mu.Unlock()
	if done {
		return nil
	}
	groups, err := b.zk.Children("/consumers")
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	for _, g := range groups {
		if offsetsPartitionOf(g, n) != p {
			continue
		}
		pids, err := b.zk.Children(txnOffsetsDir(g))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		} else if err != nil {
			return err
		}
		for _, s := range pids {
			if pid, err := strconv.ParseInt(s, 10, 64); err == nil {
				b.txnOffsets.add(pid, g)
			}
		}
	}
	b.txnOffsets.mu.Lock()
	if b.txnOffsets.scanned == nil {
		b.txnOffsets.scanned = map[int32]int32{}
	}
	b.txnOffsets.scanned[p] = epoch
	b.txnOffsets.mu.Unlock()
	return nil
}

// completeTxnOffsets ends the pending transactional offsets of producerID
// in the groups of __consumer_offsets partition `partition` (led here):
// written as committed offsets when commit, dropped otherwise. It is
// called by the WriteTxnMarkers handler for a marker on that partition;
// an error code other than NONE makes the coordinator send the marker
// again. producerEpoch is the marker's: a node written under a newer
// epoch (a later transaction of the same producer) is left alone.
func (b *Broker) completeTxnOffsets(partition int32, producerID int64, producerEpoch int16, commit bool) kproto.ErrorCode {
	t := b.cluster.topic(offsetsTopic)
	if t == nil || int(partition) >= len(t.replicas) {
		return kproto.CodeUnknownTopicOrPartition
	}
	part := t.partition(partition)
	if part == nil {
		return kproto.CodeNotLeaderOrFollower
	}
	n := len(t.replicas)
	if err := b.scanTxnOffsets(partition, n, part.leaderEpoch.Load()); err != nil {
		b.log.Warn("reading pending transactional offsets", "partition", partition, "err", err)
		return kproto.CodeCoordinatorNotAvailable
	}
	for _, g := range b.txnOffsets.pending(producerID, partition, n) {
		if code := b.completeGroupTxnOffsets(g, producerID, producerEpoch, commit); code != kproto.CodeNone {
			return code
		}
	}
	return kproto.CodeNone
}

// completeGroupTxnOffsets is completeTxnOffsets for one group.
func (b *Broker) completeGroupTxnOffsets(group string, producerID int64, producerEpoch int16, commit bool) kproto.ErrorCode {
	path := txnOffsetsPath(group, producerID)
	data, st, err := b.zk.Get(path)
	if errors.Is(err, zk.ErrNoNode) {
		b.txnOffsets.remove(producerID, group)
		return kproto.CodeNone
	}
	if err != nil {
		return kproto.CodeCoordinatorNotAvailable
	}
	var z txnOffsetsZNode
	if err := json.Unmarshal(data, &z); err != nil {
		b.log.Warn("dropping unparsable pending transactional offsets", "path", path, "err", err)
		z = txnOffsetsZNode{}
	}
	if z.ProducerEpoch > producerEpoch {
		return kproto.CodeNone // a later transaction's
	}
	if commit && len(z.Offsets) > 0 {
		g, code := b.groups.lookup(group, true)
		if code != 0 || g == nil {
			return kproto.CodeCoordinatorNotAvailable
		}
		ws := make([]offsetWrite, 0, len(z.Offsets))
		for _, o := range z.Offsets {
			ws = append(ws, offsetWrite{tp: topicPartition{o.Topic, o.Partition}, offset: o.Offset, leaderEpoch: o.LeaderEpoch, metadata: o.Metadata})
		}
		if err := g.writeOffsets(ws); err != nil {
			b.log.Warn("writing committed transactional offsets", "group", group, "producer_id", producerID, "err", err)
			return kproto.CodeCoordinatorNotAvailable
		}
	}
	// A node rewritten meanwhile (bad version) is decided again by the
	// resent marker.
	if err := b.zk.Multi(&zk.DeleteRequest{Path: path, Version: st.Version}); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return kproto.CodeCoordinatorNotAvailable
	}
	b.txnOffsets.remove(producerID, group)
	return kproto.CodeNone
}

// putTxnOffsets merges offs into the pending offsets of producerID in
// group (written before TxnOffsetCommit answers).
func (b *Broker) putTxnOffsets(group string, producerID int64, producerEpoch int16, offs []txnOffsetZEntry) error {
	path := txnOffsetsPath(group, producerID)
	for attempt := 0; attempt < 5; attempt++ {
		data, st, err := b.zk.Get(path)
		var z txnOffsetsZNode
		switch {
		case errors.Is(err, zk.ErrNoNode):
			st = nil
		case err != nil:
			return err
		default:
			if json.Unmarshal(data, &z) != nil || z.ProducerEpoch != producerEpoch {
				z = txnOffsetsZNode{} // another transaction's leftovers
			}
		}
		z.ProducerEpoch = producerEpoch
		for _, o := range offs {
			replaced := false
			for i := range z.Offsets {
				if z.Offsets[i].Topic == o.Topic && z.Offsets[i].Partition == o.Partition {
					z.Offsets[i], replaced = o, true
				}
			}
			if !replaced {
				z.Offsets = append(z.Offsets, o)
			}
		}
		body := zkmeta.MustJSON(z)
		if st != nil {
			_, err = b.zk.Set(path, body, st.Version)
		} else {
			for _, p := range []string{"/consumers", groupPath(group), txnOffsetsDir(group)} {
				if err := b.zk.EnsurePersistent(p); err != nil {
					return err
				}
			}
			err = b.zk.Create(path, body, 0)
		}
		if errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		b.txnOffsets.add(producerID, group)
		return nil
	}
	return errors.New("too much contention on " + path)
}

// unstableOffsets are the partitions of group with offsets pending in an
// open transaction, for OffsetFetch with require_stable (KIP-447), which
// answers UNSTABLE_OFFSET_COMMIT for them until the transaction ends.
func (b *Broker) unstableOffsets(group string) (map[topicPartition]bool, error) {
	t := b.cluster.topic(offsetsTopic)
	if t == nil || len(t.replicas) == 0 {
		return nil, nil
	}
	n := len(t.replicas)
	p := offsetsPartitionOf(group, n)
	part := t.partition(p)
	if part == nil {
		return nil, nil
	}
	if err := b.scanTxnOffsets(p, n, part.leaderEpoch.Load()); err != nil {
		return nil, err
	}
	var pids []int64
	b.txnOffsets.mu.Lock()
	for pid, gs := range b.txnOffsets.groups {
		if gs[group] {
			pids = append(pids, pid)
		}
	}
	b.txnOffsets.mu.Unlock()
	out := map[topicPartition]bool{}
	for _, pid := range pids {
		data, _, err := b.zk.Get(txnOffsetsPath(group, pid))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		} else if err != nil {
			return nil, err
		}
		var z txnOffsetsZNode
		if json.Unmarshal(data, &z) != nil {
			continue
		}
		for _, o := range z.Offsets {
			out[topicPartition{o.Topic, o.Partition}] = true
		}
	}
	return out, nil
}

// unstableSet is the outcome of unstableOffsets, taken before the
// committed offsets are read: a transaction's offsets are written to the
// group and only then is its pending node deleted, so an offset that was
// pending when the set was taken is either still pending (unstable) or
// already in what is read after it. Read the other way round, a commit
// completing in between would be in neither.
type unstableSet struct {
	parts map[topicPartition]bool
	err   error
}

// unstableBefore takes group's unstable set for an OffsetFetch with
// require_stable (nil set without it).
func (b *Broker) unstableBefore(group string, requireStable bool) *unstableSet {
	if !requireStable {
		return nil
	}
	parts, err := b.unstableOffsets(group)
	return &unstableSet{parts, err}
}

// mark sets UNSTABLE_OFFSET_COMMIT (and offset -1) on the fetched
// partitions that were pending; on a ZooKeeper failure every partition is
// unstable (the client retries).
func (u *unstableSet) mark(out []fetchedTopic) {
	if u == nil {
		return
	}
	for i := range out {
		for j := range out[i].partitions {
			fp := &out[i].partitions[j]
			if fp.errorCode == 0 && (u.err != nil || u.parts[topicPartition{out[i].name, fp.partition}]) {
				fp.errorCode, fp.offset, fp.leaderEpoch = int16(kproto.CodeUnstableOffsetCommit), -1, -1
			}
		}
	}
}
