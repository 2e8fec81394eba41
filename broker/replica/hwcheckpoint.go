package replica

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// HighWatermarkFile is the name of the high watermark checkpoint in each
// log directory (Kafka's ReplicaManager.HighWatermarkFilename).
const HighWatermarkFile = "replication-offset-checkpoint"

// TopicPartition names a partition in a checkpoint.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// WriteHighWatermarks writes dir's replication-offset-checkpoint: Kafka's
// CheckpointFile text, version 0, the count, then "topic partition offset"
// lines, written whole (temporary file, fsync, rename).
func WriteHighWatermarks(dir string, hws map[TopicPartition]int64) error {
	keys := make([]TopicPartition, 0, len(hws))
	for k := range hws {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Topic != keys[j].Topic {
			return keys[i].Topic < keys[j].Topic
		}
		return keys[i].Partition < keys[j].Partition
	})
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", len(keys))
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d %d\n", k.Topic, k.Partition, hws[k])
	}
	return writeFileAtomic(filepath.Join(dir, HighWatermarkFile), []byte(b.String()))
}

// ReadHighWatermarks reads dir's replication-offset-checkpoint (none: an
// empty map).
func ReadHighWatermarks(dir string) (map[TopicPartition]int64, error) {
	path := filepath.Join(dir, HighWatermarkFile)
	data, err := os.ReadFile(path)
	out := map[TopicPartition]int64{}
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	var lines []string
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("%s: unsupported version or missing count", path)
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, fmt.Errorf("%s: bad entry count %q", path, lines[1])
	}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 3 {
			return nil, fmt.Errorf("%s: bad entry %q", path, l)
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: bad entry %q", path, l)
		}
		out[TopicPartition{f[0], int32(p)}] = off
	}
	return out, nil
}
