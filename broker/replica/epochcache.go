package replica

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// CheckpointName is the file's name in a partition directory.
const CheckpointName = "leader-epoch-checkpoint"

// Undefined is Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET.
const Undefined = -1

// EpochEntry is the first offset written under a leader epoch.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// EpochCache is a partition's leader epoch cache, kept in
// leader-epoch-checkpoint. Safe for concurrent use.
type EpochCache struct {
	path string
	mu   sync.Mutex
	// entries: Invariant: strictly increasing Epoch and StartOffset.
	entries []EpochEntry
}

// OpenEpochCache reads dir's leader-epoch-checkpoint (none: empty).
func OpenEpochCache(dir string) (*EpochCache, error) {
	c := &EpochCache{path: filepath.Join(dir, CheckpointName)}
	data, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if c.entries, err = parseCheckpoint(string(data)); err != nil {
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	return c, nil
}

func parseCheckpoint(s string) ([]EpochEntry, error) {
	sc := bufio.NewScanner(strings.NewReader(s))
	line := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return strings.TrimSpace(sc.Text()), true
	}
	v, ok := line()
	if !ok || v != "0" {
		return nil, fmt.Errorf("unsupported version %q", v)
	}
	n, ok := line()
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 0 {
		return nil, fmt.Errorf("bad entry count %q", n)
	}
	var out []EpochEntry
	for i := 0; i < count; i++ {
		l, ok := line()
		f := strings.Fields(l)
		if !ok || len(f) != 2 {
			return nil, fmt.Errorf("entry %d: %q", i, l)
		}
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || e < 0 || o < 0 ||
			len(out) > 0 && (int32(e) <= out[len(out)-1].Epoch || o < out[len(out)-1].StartOffset) {
			return nil, fmt.Errorf("entry %d: %q", i, l)
		}
		out = append(out, EpochEntry{int32(e), o})
	}
	if l, ok := line(); ok && l != "" {
		return nil, fmt.Errorf("%d entries expected, more found", count)
	}
	return out, nil
}

func formatCheckpoint(entries []EpochEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return b.String()
}

// Entries returns a copy of the cache.
func (c *EpochCache) Entries() []EpochEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]EpochEntry(nil), c.entries...)
}

// Latest is the newest epoch (Undefined when empty).
func (c *EpochCache) Latest() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) == 0 {
		return Undefined
	}
	return c.entries[len(c.entries)-1].Epoch
}

// Assign records that epoch starts at offset and writes the file when
// that changed it. An epoch not above the latest is ignored; entries
// at or after offset (written under older epochs and since truncated, or
// never written) give way to the new one.
func (c *EpochCache) Assign(epoch int32, offset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.entries); n > 0 && epoch <= c.entries[n-1].Epoch {
		return nil
	}
	for len(c.entries) > 0 && c.entries[len(c.entries)-1].StartOffset >= offset {
		c.entries = c.entries[:len(c.entries)-1]
	}
	c.entries = append(c.entries, EpochEntry{epoch, offset})
	return c.flushLocked()
}

// EndOffsetFor answers OffsetForLeaderEpoch for a log ending at
// logEndOffset, as Kafka's LeaderEpochFileCache.endOffsetFor: the largest
// epoch at or below requested and the offset where the next epoch starts
// (the log end for the latest epoch); Undefined, Undefined when requested
// is undefined or above every epoch. A requested epoch below the first
// one answers itself and the first epoch's start.
func (c *EpochCache) EndOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.entries)
	if requested == Undefined || n == 0 {
		return Undefined, Undefined
	}
	if c.entries[n-1].Epoch == requested {
		return requested, logEndOffset
	}
	higher := -1
	for i, e := range c.entries {
		if e.Epoch > requested {
			higher = i
			break
		}
	}
	if higher < 0 {
		return Undefined, Undefined
	}
	if higher == 0 {
		return requested, c.entries[0].StartOffset
	}
	return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
}

// TruncateFromEnd drops what starts at or after endOffset, after a log
// truncation to endOffset.
func (c *EpochCache) TruncateFromEnd(endOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.entries)
	for len(c.entries) > 0 && c.entries[len(c.entries)-1].StartOffset >= endOffset {
		c.entries = c.entries[:len(c.entries)-1]
	}
	if len(c.entries) == n {
		return nil
	}
	return c.flushLocked()
}

// flushLocked writes the file. c.mu must be held (the write is small
// and rare: once per leadership change or epoch seen by a follower).
func (c *EpochCache) flushLocked() error {
	return writeFileAtomic(c.path, []byte(formatCheckpoint(c.entries)))
}

// WriteFileAtomic is writeFileAtomic, for the partition's other files
// written whole (producer state snapshots).
func WriteFileAtomic(path string, data []byte) error { return writeFileAtomic(path, data) }

// writeFileAtomic writes a checkpoint file whole: temporary file, fsync,
// rename, directory fsync, so a crash leaves the old or the new file.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
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
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
