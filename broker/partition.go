package broker

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkafka/zkafka/broker/replica"
	"github.com/zkafka/zkafka/kproto"
	"github.com/zkafka/zkafka/store/segment"
)

// partition is one partition this broker holds a replica of: a segment
// log in {log.dir}/{topic}-{partition}, the idempotent producers' state,
// the fetches waiting for data, and its role: leader (with the ISR and
// its followers' positions, partition_replica.go) or follower of another
// broker (fetched by broker/replica's fetchers).
//
// Writes are serialized by mu (validation happens before, outside it);
// reads go to the log without mu. The high watermark is the smallest log
// end offset of the ISR on a leader, min(leader's, own log end) on a
// follower; fsync follows the flush.messages/flush.ms policy, as in Kafka.
type partition struct {
	topic   string
	index   int32
	topicID [16]byte
	dir     string
	log     *segment.Log
	// self is this broker's id.
	self int32
	// logger is the partition's (warnings about its files).
	logger *slog.Logger
	// hw is the high watermark. Written under mu; read without it.
	hw atomic.Int64
	// onISRChange is told when the leader wants the ISR changed (the
	// broker sends AlterPartition to the controller).
	onISRChange func(*partition)
	// cfg is the topic's effective config; replaced when /config/topics
	// changes (segment options only apply after a reopen).
	cfg atomic.Pointer[topicConfig]
	// epochs is the leader epoch cache (leader-epoch-checkpoint).
	epochs *replica.EpochCache
	// leaderEpoch is the partition's leader epoch as this broker knows it
	// (from the state znode): the one it leads in, stamped into every
	// appended batch, or the one it follows in. Set under mu.
	leaderEpoch atomic.Int32
	// firstUnstable is the first offset of the open transactions and of
	// those whose marker the high watermark has not passed
	// (partition_txn.go); math.MaxInt64 when none. Written under mu.
	firstUnstable atomic.Int64

	mu struct {
		sync.Mutex
		// producers holds the last batches of each idempotent producer.
		producers map[int64]*producerState
		// waiters are fetches and acks=all produces parked until an
		// append, a high watermark move or a role change; each channel has
		// a buffer of one and is signalled (not closed) once, then dropped.
		waiters []chan struct{}
		// role is leader, follower or none (no leader known).
		role role
		// leaderID is the broker led or followed (-1: none).
		leaderID int32
		// replicas is the assignment; partitionEpoch the state znode's
		// version the role was taken from (AlterPartition's CAS token).
		replicas       []int32
		partitionEpoch int32
		// isr is the committed ISR (the state znode's).
		isr []int32
		// leader is the ISR and the followers' positions; nil unless
		// role == roleLeader.
		leader *replica.LeaderState
		// followerStarts are the followers' log start offsets from
		// their fetches while this broker leads (delete_records.go).
		followerStarts map[int32]int64
		// unstable are the completed transactions the high watermark has
		// not passed, in marker order (partition_txn.go).
		unstable []unstableTxn
		// verified are the producers whose next transactional batch the
		// coordinator verified (KIP-890, partition_txn_verify.go).
		verified map[int64]verification
	}
}

// role is what this broker does for a partition.
type role int8

const (
	roleNone     role = iota // no live leader: neither serves nor fetches
	roleLeader               // serves produce and fetch
	roleFollower             // fetches from mu.leaderID
)

// openPartition opens (creating or recovering) the log in dir and rebuilds
// the producer state from the batch headers.
func openPartition(dir, topic string, index int32, cfg *topicConfig, log *slog.Logger) (*partition, error) {
	return openReplica(dir, topic, index, [16]byte{}, -1, cfg, log)
}

// openReplica is openPartition with the topic id and this broker's id; it
// starts with no role and the high watermark at 0 (setHighWatermark
// gives the checkpointed one).
func openReplica(dir, topic string, index int32, topicID [16]byte, self int32, cfg *topicConfig, log *slog.Logger) (*partition, error) {
	opts := cfg.segmentOptions()
	opts.Logger = log.With("partition", fmt.Sprintf("%s-%d", topic, index))
	l, err := segment.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	epochs, err := replica.OpenEpochCache(dir)
	if err != nil {
		l.Close()
		return nil, err
	}
	p := &partition{topic: topic, index: index, topicID: topicID, dir: dir, log: l, epochs: epochs, self: self, logger: opts.Logger}
	p.mu.leaderID, p.mu.partitionEpoch = -1, -1
	p.cfg.Store(cfg)
	p.mu.producers = map[int64]*producerState{}
	p.mu.verified = map[int64]verification{}
	p.firstUnstable.Store(math.MaxInt64)
	if _, err := p.loadProducers(); err != nil {
		l.Close()
		return nil, fmt.Errorf("rebuilding producer state of %s-%d: %w", topic, index, err)
	}
	return p, nil
}

// loadProducers loads the latest producer state snapshot and scans the
// batch headers after it (61 bytes each, read from the file; record bytes
// are not read), recording the idempotent producers' last batches, as
// Kafka's ProducerStateManager does; without a snapshot, every header.
// It returns how many headers it read.
func (p *partition) loadProducers() (int, error) {
	var h [kproto.BatchHeaderSize]byte
	read := 0
	for off := p.loadProducerSnapshot(); off < p.log.NextOffset(); {
		r, err := p.log.Read(off, 4<<20)
		if err != nil {
			return read, err
		}
		for pos := int64(0); pos < r.Len; {
			if _, err := r.ReadAt(h[:], pos); err != nil && !errors.Is(err, io.EOF) {
				r.Release()
				return read, err
			}
			read++
			b := kproto.Batch(h[:])
			size := int64(b.BatchLength()) + 12
			if b.ProducerID() >= 0 && b.Control() && size <= 1<<20 {
				// A marker: its record says commit or abort.
				whole := make([]byte, size)
				if _, err := r.ReadAt(whole, pos); err != nil && !errors.Is(err, io.EOF) {
					r.Release()
					return read, err
				}
				b = kproto.Batch(whole)
			}
			p.recordBatchLocked(b, b.BaseOffset())
			pos += size
		}
		next := r.NextOffset
		r.Release()
		if next <= off {
			break
		}
		off = next
	}
	p.refreshUnstableLocked()
	return read, nil
}

// checkLeaderEpoch checks a request's current_leader_epoch (-1: none)
// against the partition's, as Kafka's Partition does for Fetch,
// ListOffsets and OffsetForLeaderEpoch.
func (p *partition) checkLeaderEpoch(current int32) kproto.ErrorCode {
	switch le := p.leaderEpoch.Load(); {
	case current == -1 || current == le:
		return kproto.CodeNone
	case current < le:
		return kproto.CodeFencedLeaderEpoch
	default:
		return kproto.CodeUnknownLeaderEpoch
	}
}

// appendResult is the outcome of one produced batch.
type appendResult struct {
	code          kproto.ErrorCode
	baseOffset    int64
	logAppendTime int64 // -1 for CreateTime topics
	msg           string
}

// appendBatch appends a validated batch (CRC checked, magic 2): it checks
// the producer sequence, rewrites the leader epoch (and, for LogAppendTime
// topics, the max timestamp and CRC) in place, appends, and wakes the
// waiting fetches. A duplicate of one of a producer's last five batches is
// not appended again: it answers NONE with the original base offset, as
// Kafka does.
func (p *partition) appendBatch(b kproto.Batch, now time.Time) appendResult {
	return p.appendChecked(b, now, txnCheck{})
}

// txnCheck is what a client's transactional batch must pass besides the
// sequence checks: with verify (transaction.partition.verification.enable),
// a batch opening a transaction needs the guard of its verification
// (partition_txn_verify.go). Batches the broker writes itself (group and
// transaction coordinators) are not checked.
type txnCheck struct {
	verify bool
	guard  uint64
}

// appendChecked is appendBatch for a produced batch, with chk.
func (p *partition) appendChecked(b kproto.Batch, now time.Time, chk txnCheck) appendResult {
	cfg := p.cfg.Load()
	res := appendResult{logAppendTime: -1}
	if cfg.logAppendTime {
		res.logAppendTime = now.UnixMilli()
		b.SetMaxTimestampAndType(res.logAppendTime, true)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.role != roleLeader {
		// Leadership moved after the handler looked the partition up.
		res.code, res.baseOffset = kproto.CodeNotLeaderOrFollower, -1
		return res
	}
	b.SetPartitionLeaderEpoch(p.leaderEpoch.Load()) // not covered by the CRC; under mu, so no batch of an epoch follows the next one's start
	if dup, code := p.checkProducerLocked(b); code != kproto.CodeNone || dup != nil {
		if dup != nil {
			res.baseOffset = dup.firstOffset
		} else {
			res.code, res.baseOffset = code, -1
		}
		return res
	}
	if chk.verify && b.Transactional() && !p.verifiedLocked(b.ProducerID(), b.ProducerEpoch(), chk.guard) {
		res.code, res.baseOffset = kproto.CodeInvalidTxnState, -1
		res.msg = "the transactional batch's partition is not in the producer's ongoing transaction (KIP-890 verification)"
		return res
	}
	before := p.log.ActiveBase()
	base, err := p.log.Append(b, b.NumRecords(), b.MaxTimestamp())
	if err != nil {
		res.code, res.baseOffset, res.msg = kproto.CodeKafkaStorageError, -1, err.Error()
		return res
	}
	p.snapshotIfRolledLocked(before)
	res.baseOffset = base
	p.recordBatchLocked(b, base)
	p.advanceLocked()
	p.wakeLocked()
	return res
}

// wakeLocked signals every parked fetch. p.mu must be held.
func (p *partition) wakeLocked() {
	for _, ch := range p.mu.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	clear(p.mu.waiters)
	p.mu.waiters = p.mu.waiters[:0]
}

// addWaiter parks ch until the next append. The caller must check for
// data after adding, so that an append in between is not missed.
func (p *partition) addWaiter(ch chan struct{}) {
	p.mu.Lock()
	p.mu.waiters = append(p.mu.waiters, ch)
	p.mu.Unlock()
}

// removeWaiter unparks ch if no append has dropped it yet.
func (p *partition) removeWaiter(ch chan struct{}) {
	p.mu.Lock()
	if i := slices.Index(p.mu.waiters, ch); i >= 0 {
		p.mu.waiters = slices.Delete(p.mu.waiters, i, i+1)
	}
	p.mu.Unlock()
}

// highWatermark is the offset after the last committed batch (also the
// last stable offset, as there are no transactions).
func (p *partition) highWatermark() int64 { return p.hw.Load() }

func (p *partition) close() error {
	p.mu.Lock()
	p.mu.role, p.mu.leader = roleNone, nil // no fetch or acks=all wait uses it any more
	p.wakeLocked()
	// A clean close snapshots the producer state at the log end, so the
	// next open reads no batch header (Kafka's LogManager.shutdown).
	if end := p.log.NextOffset(); end > p.log.StartOffset() {
		if err := p.writeProducerSnapshotLocked(end); err != nil && p.logger != nil {
			p.logger.Warn("writing the producer state snapshot at close", "err", err)
		}
	}
	p.mu.Unlock()
	return p.log.Close()
}
