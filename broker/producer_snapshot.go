package broker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/broker/replica"
)

// Producer state snapshots: Kafka's {offset:020d}.snapshot files in the
// partition directory (ProducerStateManager), the idempotent producers'
// state as of that offset, taken when the log rolls (at the new segment's
// base offset) and at a clean close (at the log end). Opening a partition
// loads the latest snapshot at or below the log end and reads only the
// batch headers after it; a snapshot that does not decode (CRC, length,
// version) is deleted with a warning and the next older one tried, down
// to reading the whole log. Truncation deletes the snapshots above the
// new log end, as Kafka's truncateAndReload does. The file, big-endian:
//
//	int16  version (1)
//	uint32 CRC-32C of everything after it
//	int32  number of entries, then per producer:
//	  int64 producer_id, int16 epoch, int32 last_sequence, int64 last_offset,
//	  int32 offset_delta (last_sequence - first sequence of its last batch),
//	  int64 timestamp (that batch's max timestamp),
//	  int32 coordinator_epoch (of its last marker, -1 before one),
//	  int64 current_txn_first_offset (its open transaction's, -1 none)
//
// A producer known only by a marker (no batch left) is written with
// last_sequence -1, last_offset -1, offset_delta 0 and timestamp -1.
//
// As Kafka's, a snapshot keeps each producer's last batch only: after a
// restart, a retry of one of the four batches before it (which Kafka
// would not deduplicate either) is deduplicated only if it is above the
// snapshot, in the headers read after it.

const (
	snapshotSuffix    = ".snapshot"
	snapshotVersion   = 1
	snapshotHeader    = 2 + 4
	snapshotEntrySize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var errBadSnapshot = errors.New("producer snapshot does not decode")

func snapshotPath(dir string, off int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", off, snapshotSuffix))
}

// encodeProducerSnapshot is producers in Kafka's snapshot format, by
// producer id.
func encodeProducerSnapshot(producers map[int64]*producerState) []byte {
	pids := make([]int64, 0, len(producers))
	for pid, st := range producers {
		if st.n > 0 || st.txnFirst >= 0 || st.coordinatorEpoch >= 0 {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	b := make([]byte, snapshotHeader, snapshotHeader+4+len(pids)*snapshotEntrySize)
	binary.BigEndian.PutUint16(b, snapshotVersion)
	b = binary.BigEndian.AppendUint32(b, uint32(len(pids)))
	for _, pid := range pids {
		st := producers[pid]
		lb := producerBatch{firstSeq: -1, lastSeq: -1, firstOffset: -1, maxTimestamp: -1}
		if st.n > 0 {
			lb = *st.last()
		}
		delta := lb.lastSeq - lb.firstSeq // wraps as Kafka's int arithmetic
		b = binary.BigEndian.AppendUint64(b, uint64(pid))
		b = binary.BigEndian.AppendUint16(b, uint16(st.epoch))
		b = binary.BigEndian.AppendUint32(b, uint32(lb.lastSeq))
		b = binary.BigEndian.AppendUint64(b, uint64(lb.firstOffset+int64(delta)))
		b = binary.BigEndian.AppendUint32(b, uint32(delta))
		b = binary.BigEndian.AppendUint64(b, uint64(lb.maxTimestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(st.coordinatorEpoch))
		b = binary.BigEndian.AppendUint64(b, uint64(st.txnFirst))
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[snapshotHeader:], castagnoli))
	return b
}

// decodeProducerSnapshot reads a snapshot file's bytes.
func decodeProducerSnapshot(b []byte) (map[int64]*producerState, error) {
	if len(b) < snapshotHeader+4 || binary.BigEndian.Uint16(b) != snapshotVersion {
		return nil, errBadSnapshot
	}
	if crc32.Checksum(b[snapshotHeader:], castagnoli) != binary.BigEndian.Uint32(b[2:]) {
		return nil, fmt.Errorf("%w: CRC mismatch", errBadSnapshot)
	}
	n := int(int32(binary.BigEndian.Uint32(b[snapshotHeader:])))
	body := b[snapshotHeader+4:]
	if n < 0 || len(body) != n*snapshotEntrySize {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", errBadSnapshot, n, len(body))
	}
	out := make(map[int64]*producerState, n)
	for e := body; len(e) > 0; e = e[snapshotEntrySize:] {
		pid := int64(binary.BigEndian.Uint64(e))
		epoch := int16(binary.BigEndian.Uint16(e[8:]))
		lastSeq := int32(binary.BigEndian.Uint32(e[10:]))
		lastOff := int64(binary.BigEndian.Uint64(e[14:]))
		delta := int32(binary.BigEndian.Uint32(e[22:]))
		ts := int64(binary.BigEndian.Uint64(e[26:]))
		st := newProducerState(epoch)
		st.coordinatorEpoch = int32(binary.BigEndian.Uint32(e[34:]))
		st.txnFirst = max(int64(binary.BigEndian.Uint64(e[38:])), -1)
		if lastOff >= 0 {
			st.push(producerBatch{firstSeq: lastSeq - delta, lastSeq: lastSeq, firstOffset: lastOff - int64(delta), maxTimestamp: ts})
		}
		out[pid] = st
	}
	return out, nil
}

// snapshotOffsets lists the offsets of dir's snapshot files, ascending.
func snapshotOffsets(dir string) []int64 {
	ents, _ := os.ReadDir(dir)
	var out []int64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), snapshotSuffix)
		if !ok || len(name) != 20 {
			continue
		}
		if off, err := strconv.ParseInt(name, 10, 64); err == nil {
			out = append(out, off)
		}
	}
	slices.Sort(out)
	return out
}

// writeProducerSnapshotLocked writes the producer state as of off (the
// log holds exactly the batches below off in it). p.mu must be held.
func (p *partition) writeProducerSnapshotLocked(off int64) error {
	return replica.WriteFileAtomic(snapshotPath(p.dir, off), encodeProducerSnapshot(p.mu.producers))
}

// snapshotIfRolledLocked snapshots the producer state at the new active
// segment's base when the append just made rolled the log (the active
// segment was before); the batch appended is the new segment's first and
// is recorded after this. p.mu must be held.
func (p *partition) snapshotIfRolledLocked(before int64) {
	base := p.log.ActiveBase()
	if base == before {
		return
	}
	if err := p.writeProducerSnapshotLocked(base); err != nil && p.logger != nil {
		p.logger.Warn("writing the producer state snapshot at a segment roll", "offset", base, "err", err)
	}
}

// deleteSnapshotsAbove removes the snapshots past end (a truncation).
func (p *partition) deleteSnapshotsAbove(end int64) {
	for _, off := range snapshotOffsets(p.dir) {
		if off > end {
			os.Remove(snapshotPath(p.dir, off))
		}
	}
}

// loadProducerSnapshot loads into p.mu.producers the latest snapshot
// within the log (between its start and end offsets) that decodes and
// returns its offset, where reading the batch headers resumes; the log
// start when there is none. A bad snapshot is deleted with a warning.
func (p *partition) loadProducerSnapshot() int64 {
	start, end := p.log.StartOffset(), p.log.NextOffset()
	offs := snapshotOffsets(p.dir)
	for i := len(offs) - 1; i >= 0; i-- {
		off := offs[i]
		if off > end || off < start {
			os.Remove(snapshotPath(p.dir, off)) // past a truncation or below the log start
			continue
		}
		data, err := os.ReadFile(snapshotPath(p.dir, off))
		var m map[int64]*producerState
		if err == nil {
			m, err = decodeProducerSnapshot(data)
		}
		if err != nil {
			if p.logger != nil {
				p.logger.Warn("producer state snapshot ignored; rebuilding from the log", "file", snapshotPath(p.dir, off), "err", err)
			}
			os.Remove(snapshotPath(p.dir, off))
			continue
		}
		p.mu.producers = m
		return off
	}
	return start
}
