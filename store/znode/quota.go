package znode

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/zkproto"
)

// Quotas as ZooKeeper 3.8 keeps them (DataTree, ZooKeeperServer.checkQuota).
// zkCli's setquota writes, for a path P,
//
//	/zookeeper/quota/P/zookeeper_limits  "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=10"
//	/zookeeper/quota/P/zookeeper_stats   "count=0,bytes=0"
//
// and the server does the rest: creating the stats node sets its data to
// the count and bytes of P's subtree (P included), and every create, delete
// and setData under P adds to it, without touching the stat node's version
// or mzxid (DataTree.updateQuotaStat writes node.data in place). ZooKeeper
// keeps the quota'd paths in a PathTrie; here they are derived from the
// tree: P has a quota while its zookeeper_limits node exists, and the
// deepest such P above a path counts it. The root never counts
// (getMaxPrefixWithQuota ignores "/").
const (
	QuotaRoot      = "/zookeeper/quota"
	QuotaLimitNode = "zookeeper_limits"
	QuotaStatNode  = "zookeeper_stats"
)

// quotaPrefix returns the deepest path at or above path that has a quota,
// or "" for none. It costs one lookup when no quota exists.
func (t *Tree) quotaPrefix(path string) string {
	if q := t.get(QuotaRoot); q == nil || q.numChildren == 0 {
		return ""
	}
	for p := path; p != "" && p != "/"; p = parentOf(p) {
		if t.get(QuotaRoot+p+"/"+QuotaLimitNode) != nil {
			return p
		}
	}
	return ""
}

// updateQuotaStat adds to the stats of the quota at prefix
// (DataTree.updateQuotaStat). The stats node keeps its stat.
func (t *Tree) updateQuotaStat(prefix string, bytesDiff int64, countDiff int64) {
	n := t.get(QuotaRoot + prefix + "/" + QuotaStatNode)
	if n == nil {
		return // ZooKeeper logs "Missing node for stat" and goes on
	}
	st := ParseStatsTrack(n.data())
	st.Set("count", st.Get("count")+countDiff)
	st.Set("bytes", st.Get("bytes")+bytesDiff)
	t.replace(n, n.withData([]byte(st.String())))
}

// quotaCreated follows the create of path: a zookeeper_stats node under
// /zookeeper/quota gets the counts of the subtree it tracks
// (DataTree.updateQuotaForPath), and a node under a quota is counted.
func (t *Tree) quotaCreated(path string, dataLen int) {
	parent, name := parentOf(path), path[strings.LastIndexByte(path, '/')+1:]
	if name == QuotaStatNode && strings.HasPrefix(parent, QuotaRoot) {
		t.setQuotaStats(path, parent[len(QuotaRoot):])
	}
	if prefix := t.quotaPrefix(path); prefix != "" {
		t.updateQuotaStat(prefix, int64(dataLen), 1)
	}
}

// setQuotaStats writes "count=N,bytes=M" of the subtree at tracked (""
// is the root, counted whole as getCounts("") does) into the stats node.
func (t *Tree) setQuotaStats(statsPath, tracked string) {
	var count, bytes int64
	add := func(n *node) bool { count++; bytes += int64(n.dataLen()); return true }
	switch root := t.get(tracked); {
	case tracked == "":
		t.nodes.Ascend(add)
	case root != nil:
		add(root)
		t.scan(tracked, 0, add)
		t.scan(tracked, '/', add)
	}
	if n := t.get(statsPath); n != nil {
		st := StatsTrack{}
		st.Set("count", count)
		st.Set("bytes", bytes)
		t.replace(n, n.withData([]byte(st.String())))
	}
}

// quotaCheck runs checkQuota for txn and keeps its warning for the result.
func (t *Tree) quotaCheck(txn *Txn, path string, bytesDiff, countDiff int64) zkproto.Err {
	w, err := t.checkQuota(path, bytesDiff, countDiff, txn.EnforceQuota)
	if w != "" {
		t.warning = w
	}
	return err
}

// checkQuota is ZooKeeperServer.checkQuota for a create (countDiff 1) or a
// setData (countDiff 0) of path that changes its bytes by bytesDiff. Only
// the hard limit is checked when one is set, else the soft one. Going over
// a hard limit fails with QuotaExceeded when enforce is set; any other
// overrun only yields the warning ZooKeeper logs.
func (t *Tree) checkQuota(path string, bytesDiff, countDiff int64, enforce bool) (warning string, err zkproto.Err) {
	prefix := t.quotaPrefix(path)
	if prefix == "" {
		return "", zkproto.ErrOK
	}
	ln := t.get(QuotaRoot + prefix + "/" + QuotaLimitNode)
	sn := t.get(QuotaRoot + prefix + "/" + QuotaStatNode)
	if ln == nil || sn == nil {
		return "", zkproto.ErrOK
	}
	limits, stats := ParseStatsTrack(ln.data()), ParseStatsTrack(sn.data())
	checks := []struct {
		diff        int64
		what        string
		soft, hard  string
		unit, label string
	}{
		{countDiff, "count", "count", "countHardLimit", "count", "CountLimit"},
		{bytesDiff, "bytes", "bytes", "byteHardLimit", "bytes", "ByteLimit"},
	}
	for _, c := range checks {
		soft, hard := limits.Get(c.soft), limits.Get(c.hard)
		if c.diff == 0 || soft <= -1 && hard <= -1 {
			continue
		}
		limit, kind := soft, "soft"
		if hard > -1 {
			limit, kind = hard, "hard"
		}
		now := stats.Get(c.what) + c.diff
		if now <= limit {
			continue
		}
		warning = fmt.Sprintf("Quota exceeded: %s [current %s=%d, %s%s=%d]", prefix, c.unit, now, kind, c.label, limit)
		if kind == "hard" && enforce {
			return warning, zkproto.ErrQuotaExceeded
		}
	}
	return warning, zkproto.ErrOK
}

// StatsTrack is ZooKeeper's StatsTrack: "k=v" pairs split on [,;]+, a
// missing or empty value reading as -1.
type StatsTrack map[string]int64

var pairsSeparator = regexp.MustCompile("[,;]+")

// ParseStatsTrack reads a zookeeper_limits or zookeeper_stats value.
func ParseStatsTrack(data []byte) StatsTrack {
	st := StatsTrack{}
	if len(data) == 0 {
		return st
	}
	for _, pair := range pairsSeparator.Split(string(data), -1) {
		kv := strings.Split(pair, "=")
		if len(kv) < 2 || kv[1] == "" {
			if len(kv) >= 1 && kv[0] != "" {
				st[kv[0]] = -1
			}
			continue
		}
		if v, err := strconv.ParseInt(kv[1], 10, 64); err == nil {
			st[kv[0]] = v
		}
	}
	return st
}

// Get is the value of k, -1 when absent.
func (st StatsTrack) Get(k string) int64 {
	if v, ok := st[k]; ok {
		return v
	}
	return -1
}

// Set sets k.
func (st StatsTrack) Set(k string, v int64) { st[k] = v }

// String is StatsTrack.toString: count and bytes first, then, behind an
// extra "=" that old parsers ignore, the other keys sorted, ";k=v" each.
func (st StatsTrack) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "count=%d,bytes=%d", st.Get("count"), st.Get("bytes"))
	var keys []string
	for k := range st {
		if k != "count" && k != "bytes" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return b.String()
	}
	slices.Sort(keys)
	b.WriteByte('=')
	for _, k := range keys {
		fmt.Fprintf(&b, ";%s=%d", k, st[k])
	}
	return b.String()
}
