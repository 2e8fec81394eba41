package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkafka/zkafka/store/compact"
	"github.com/zkafka/zkafka/store/segment"
)

// The log cleaner (Kafka's LogCleaner and LogCleanerManager) for topics
// whose cleanup.policy has "compact". log.cleaner.threads goroutines each
// take the filthiest compacted partition not being cleaned (the highest
// dirty ratio at or above min.cleanable.dirty.ratio, or any dirty one
// older than max.compaction.lag.ms), clean it with store/compact, and
// record where its dirty part now starts in the log dir's
// cleaner-offset-checkpoint, so a restart does not clean it all again.
// When nothing is due a thread sleeps log.cleaner.backoff.ms.
//
// A partition whose segment is corrupt is marked uncleanable (logged, as
// Kafka's "uncleanable partitions"): it keeps serving and is not cleaned
// again until the broker restarts; nothing is deleted.
//
// Each replica cleans its own log, as in Kafka. A follower fetching from a
// cleaned leader gets batches with offset gaps: the segment log, its
// indexes and Read take gaps (a read of an offset in a gap returns the
// next batch); the follower must append the batches at their own offsets.

// cleanerCheckpointName is the checkpoint file of a log dir, in Kafka's
// format: "0\n", the number of entries, then "topic partition offset"
// lines.
const cleanerCheckpointName = "cleaner-offset-checkpoint"

// logCleaner is the broker's cleaner state.
type logCleaner struct {
	b        *Broker
	cfg      CleanerConfig
	throttle *compact.Throttler

	// ckMu serializes the checkpoint file writes, which it holds across
	// (a temp file write, fsync, rename, directory fsync); order: ckMu,
	// then mu.
	ckMu sync.Mutex

	mu struct {
		sync.Mutex
		inProgress  map[*partition]bool
		uncleanable map[*partition]bool
		// checkpoints by log dir, then "topic-partition".
		checkpoints map[string]map[string]int64
		stats       compact.Stats // totals of the cleanings
		cleanings   int
	}
}

// tpKey is the checkpoint key of a partition.
func tpKey(topic string, index int32) string { return topic + " " + strconv.Itoa(int(index)) }

func newLogCleaner(b *Broker) *logCleaner {
	c := &logCleaner{b: b, cfg: b.cfg.Cleaner,
		throttle: compact.NewThrottler(b.cfg.Cleaner.IOMaxBytesPerSecond, nil, nil)}
	c.mu.inProgress = map[*partition]bool{}
	c.mu.uncleanable = map[*partition]bool{}
	c.mu.checkpoints = map[string]map[string]int64{}
	for _, dir := range b.cfg.LogDirs {
		cp, err := readCleanerCheckpoint(filepath.Join(dir, cleanerCheckpointName))
		if err != nil {
			b.log.Warn("log cleaner: ignoring an unreadable checkpoint; compacted partitions will be cleaned from their start",
				"dir", dir, "err", err)
			cp = map[string]int64{}
		}
		c.mu.checkpoints[dir] = cp
	}
	return c
}

// start runs the cleaner threads, if enabled.
func (c *logCleaner) start() {
	if !c.cfg.Enable {
		return
	}
	memory := int(min(c.cfg.DedupeBufferSize/int64(max(c.cfg.Threads, 1)), math.MaxInt32))
	for i := range c.cfg.Threads {
		c.b.goTracked(fmt.Sprintf("log-cleaner-%d", i), func() { c.run(memory) })
	}
}

// run is one cleaner thread. Its offset map is allocated with its first
// cleaning and kept.
func (c *logCleaner) run(memory int) {
	var m *compact.OffsetMap
	for {
		for {
			p, plan := c.grab()
			if p == nil {
				break
			}
			if m == nil {
				m = compact.NewOffsetMap(memory)
			}
			if !c.clean(p, plan, m) {
				break // back off before trying again
			}
			select {
			case <-c.b.done:
				return
			default:
			}
		}
		if !c.b.sleep(max(c.cfg.Backoff, time.Millisecond)) {
			return
		}
	}
}

// grab picks the filthiest cleanable partition and marks it in progress.
func (c *logCleaner) grab() (*partition, compact.Plan) {
	now := c.b.now()
	var best *partition
	var bestPlan compact.Plan
	topics := c.b.cluster.allTopics()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range topics {
		for _, p := range t.local {
			if p == nil || c.mu.inProgress[p] || c.mu.uncleanable[p] {
				continue
			}
			cc := p.cfg.Load().compaction
			if !cc.compact {
				continue
			}
			plan := compact.PlanLog(p.stableSegments(), p.log.StartOffset(), c.checkpointLocked(p), now, cc.minLag, cc.maxLag)
			if !plan.Cleanable(cc.minRatio) {
				continue
			}
			if best == nil || (plan.MustClean && !bestPlan.MustClean) ||
				(plan.MustClean == bestPlan.MustClean && plan.Ratio() > bestPlan.Ratio()) {
				best, bestPlan = p, plan
			}
		}
	}
	if best != nil {
		c.mu.inProgress[best] = true
	}
	return best, bestPlan
}

// checkpointLocked is the partition's first dirty offset, or -1.
func (c *logCleaner) checkpointLocked(p *partition) int64 {
	if off, ok := c.mu.checkpoints[filepath.Dir(p.dir)][tpKey(p.topic, p.index)]; ok {
		return off
	}
	return -1
}

// clean cleans p and records the outcome. It reports whether the dirty
// part moved forward.
func (c *logCleaner) clean(p *partition, plan compact.Plan, m *compact.OffsetMap) bool {
	cfg := p.cfg.Load()
	start := time.Now()
	next, st, err := compact.Clean(p.log, plan, compact.Options{Map: m, Throttle: c.throttle, Now: c.b.now(),
		DeleteRetention: cfg.compaction.deleteRetention, SegmentBytes: cfg.segmentBytes,
		Producers: p.activeProducers(), Abort: c.b.done})
	log := c.b.log.With("topic", p.topic, "partition", p.index)
	if c.record(p, next, st, err, log) {
		dir := filepath.Dir(p.dir)
		if err := c.persist(dir); err != nil {
			log.Warn("log cleaner: writing the checkpoint", "err", err)
		}
		log.Info("log cleaner: cleaned", "first_dirty", plan.FirstDirty, "checkpoint", next,
			"dirty_ratio", fmt.Sprintf("%.2f", plan.Ratio()), "segments", st.Segments,
			"read_bytes", st.BytesRead, "written_bytes", st.BytesWritten,
			"records_kept", st.RecordsKept, "records_read", st.RecordsRead, "map_keys", st.MapKeys,
			"elapsed", time.Since(start).Round(time.Millisecond))
		return next > plan.FirstDirty
	}
	return false
}

// record ends p's cleaning: it marks p uncleanable on a corrupt segment
// or an unexpected error, and otherwise records the new checkpoint and
// the stats; true if the cleaning succeeded.
func (c *logCleaner) record(p *partition, next int64, st compact.Stats, err error, log *slog.Logger) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.inProgress, p)
	var corrupt *segment.CorruptError
	switch {
	case errors.As(err, &corrupt):
		c.mu.uncleanable[p] = true
		log.Error("log cleaner: marking the partition uncleanable; it keeps serving, nothing was deleted", "err", err)
		return false
	case errors.Is(err, segment.ErrRewriteStale), errors.Is(err, compact.ErrAborted), errors.Is(err, segment.ErrClosed):
		log.Info("log cleaner: cleaning abandoned", "reason", err)
		return false
	case err != nil:
		c.mu.uncleanable[p] = true
		log.Error("log cleaner: marking the partition uncleanable after an unexpected error", "err", err)
		return false
	}
	c.mu.cleanings++
	c.mu.stats.BytesRead += st.BytesRead
	c.mu.stats.BytesWritten += st.BytesWritten
	c.mu.stats.RecordsRead += st.RecordsRead
	c.mu.stats.RecordsKept += st.RecordsKept
	c.mu.stats.Segments += st.Segments
	dir := filepath.Dir(p.dir)
	if c.mu.checkpoints[dir] == nil {
		c.mu.checkpoints[dir] = map[string]int64{}
	}
	c.mu.checkpoints[dir][tpKey(p.topic, p.index)] = next
	return true
}

// persist writes the checkpoint file of a log dir with what mu holds.
func (c *logCleaner) persist(dir string) error {
	c.ckMu.Lock()
	defer c.ckMu.Unlock()
	c.mu.Lock()
	cp := maps.Clone(c.mu.checkpoints[dir])
	c.mu.Unlock()
	return writeCleanerCheckpoint(filepath.Join(dir, cleanerCheckpointName), cp)
}

// forget drops a deleted partition's checkpoint and state (topic
// deletion), so a topic created again with the name starts clean.
func (c *logCleaner) forget(p *partition) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.mu.uncleanable, p)
	dir := filepath.Dir(p.dir)
	_, had := c.mu.checkpoints[dir][tpKey(p.topic, p.index)]
	delete(c.mu.checkpoints[dir], tpKey(p.topic, p.index))
	c.mu.Unlock()
	if had {
		if err := c.persist(dir); err != nil {
			c.b.log.Warn("log cleaner: writing the checkpoint", "dir", dir, "err", err)
		}
	}
}

// readCleanerCheckpoint reads a checkpoint file; a missing one is empty.
func readCleanerCheckpoint(path string) (map[string]int64, error) {
	out := map[string]int64{}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("%s: not a version 0 checkpoint", path)
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, fmt.Errorf("%s: entry count %q does not match %d lines", path, lines[1], len(lines)-2)
	}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 3 {
			return nil, fmt.Errorf("%s: bad line %q", path, l)
		}
		part, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || off < 0 {
			return nil, fmt.Errorf("%s: bad line %q", path, l)
		}
		out[tpKey(f[0], int32(part))] = off
	}
	return out, nil
}

// writeCleanerCheckpoint replaces a checkpoint file durably (temporary
// file, fsync, rename, directory fsync), as Kafka's CheckpointFile.
func writeCleanerCheckpoint(path string, cp map[string]int64) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "0\n%d\n", len(cp))
	for k, off := range cp {
		fmt.Fprintf(&sb, "%s %d\n", k, off)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(sb.String())
	err = errors.Join(err, f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = segment.OS().SyncDir(filepath.Dir(path))
	}
	return err
}
