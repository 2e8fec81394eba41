package apachezk

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/zkproto"
)

// LoadInfo says what LoadDir read.
type LoadInfo struct {
	Snapshot  string   // the snapshot file used ("" if none)
	Skipped   []string // newer snapshots that did not check out, with why
	Logs      []string // the log files replayed
	Torn      []string // log files that ended inside an entry (the valid prefix was used)
	Txns      int      // txns applied on top of the snapshot
	Bytes     int64    // bytes of the snapshot and log files read
	FirstZxid int64    // the snapshot's zxid
}

// file is a snapshot.* or log.* file and the zxid in its name.
type file struct {
	path string
	zxid int64
}

// listFiles returns dir's files named prefix.<hex zxid>, by zxid (Util.sortDataDir).
func listFiles(dir, prefix string) ([]file, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []file
	for _, de := range des {
		rest, ok := strings.CutPrefix(de.Name(), prefix+".")
		if !ok || de.IsDir() {
			continue
		}
		z, err := strconv.ParseUint(rest, 16, 64)
		if err != nil {
			continue // snapshot.1.tmp and the like
		}
		out = append(out, file{filepath.Join(dir, de.Name()), int64(z)})
	}
	slices.SortFunc(out, func(a, b file) int { return cmpInt(a.zxid, b.zxid) })
	return out, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// LoadDir loads a ZooKeeper data directory: dir is either the dataDir or
// its version-2. As FileTxnSnapLog.restore: the newest snapshot that
// checks out (older ones are tried when a newer one is damaged, and the
// damage is reported in LoadInfo.Skipped), then the txns after its zxid
// from the log files that hold them. With no snapshot and no log the tree
// is ZooKeeper's empty one; logs without a snapshot are refused, as
// ZooKeeper refuses them.
func LoadDir(dir string) (*DataTree, *LoadInfo, error) {
	if st, err := os.Stat(filepath.Join(dir, "version-2")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "version-2")
	}
	snaps, err := listFiles(dir, "snapshot")
	if err != nil {
		return nil, nil, err
	}
	logs, err := listFiles(dir, "log")
	if err != nil {
		return nil, nil, err
	}
	info := &LoadInfo{}
	dt, err := loadSnapshot(snaps, info)
	if err != nil {
		return nil, nil, err
	}
	if dt == nil {
		if len(logs) > 0 {
			return nil, nil, fmt.Errorf("%w in %s", errNoSnapshot, dir)
		}
		dt = emptyTree()
	}
	if err := replay(dt, logs, info); err != nil {
		return nil, nil, err
	}
	return dt, info, nil
}

func loadSnapshot(snaps []file, info *LoadInfo) (*DataTree, error) {
	var firstErr error
	for i := len(snaps) - 1; i >= 0; i-- {
		dt, err := readSnapshotFile(snaps[i].path, snaps[i].zxid)
		if err != nil {
			firstErr = cmpErr(firstErr, err)
			info.Skipped = append(info.Skipped, err.Error())
			continue
		}
		info.Snapshot, info.FirstZxid = snaps[i].path, snaps[i].zxid
		info.Bytes += fileSize(snaps[i].path)
		return dt, nil
	}
	return nil, firstErr
}

func cmpErr(first, err error) error {
	if first == nil {
		return err
	}
	return first
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// replay applies the txns after dt.LastZxid, from the log file with the
// largest start zxid at or below it on (FileTxnLog.getLogFiles).
func replay(dt *DataTree, logs []file, info *LoadInfo) error {
	start := 0
	for i, l := range logs {
		if l.zxid <= dt.LastZxid {
			start = i
		}
	}
	from := dt.LastZxid + 1
	for _, l := range logs[start:] {
		end, _, err := readLogFile(l.path, from, func(t *txn) {
			dt.apply(t)
			info.Txns++
			from = t.hdr.zxid + 1
		})
		if err != nil {
			return err
		}
		info.Logs = append(info.Logs, l.path)
		info.Bytes += fileSize(l.path)
		if end == endTorn {
			info.Torn = append(info.Torn, l.path)
		}
	}
	return nil
}

// emptyTree is a fresh ZooKeeper's tree (the DataTree constructor): /,
// /zookeeper, /zookeeper/quota and /zookeeper/config (world read,
// aversion -1), every stat zero.
func emptyTree() *DataTree {
	dt := newDataTree()
	dt.Nodes[""] = &Node{Data: []byte{}, ACL: zkproto.OpenACLUnsafe}
	for _, p := range []string{"/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		dt.createNode(p, []byte{}, nil, 0, 0, 0, 0)
	}
	cfg := dt.Nodes["/zookeeper/config"]
	cfg.ACL, cfg.Stat.Aversion = zkproto.ReadACLUnsafe, -1
	return dt
}
