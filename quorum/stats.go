package quorum

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// serverStats are the counters the four-letter words report.
type serverStats struct {
	received atomic.Int64
	sent     atomic.Int64
	mu       struct {
		sync.Mutex
		latency summary
		// readLatency, updateLatency split latency between the reads and
		// the writes (ServerMetrics READ_LATENCY and UPDATE_LATENCY, the
		// Prometheus readlatency and updatelatency summaries).
		readLatency, updateLatency latencySummary
		// reads and writes per top-level znode ("namespace"), as
		// ZooKeeper's ServerMetrics READ_PER_NAMESPACE and
		// WRITE_PER_NAMESPACE count them (mntr's
		// zk_*_<ns>_read_per_namespace keys).
		reads, writes map[string]*summary
		// ephemeralOwners are the sessions that created an ephemeral
		// since they opened (or since this server started): the keys of
		// ZooKeeper's DataTree.ephemerals, which keeps a session whose
		// ephemerals were all deleted until the session closes (dump
		// lists it, with no paths).
		ephemeralOwners map[int64]bool
		// proposals are the sizes of the entries this server applied
		// while leading (Leader.getProposalStats: last/min/max).
		proposals bufferStats
	}
}

// bufferStats is ZooKeeper's BufferStats: -1 until the first value.
type bufferStats struct {
	set            bool
	last, min, max int
}

func (b bufferStats) String() string {
	if !b.set {
		return "-1/-1/-1"
	}
	return strconv.Itoa(b.last) + "/" + strconv.Itoa(b.min) + "/" + strconv.Itoa(b.max)
}

// values are last, min and max, -1 before the first.
func (b bufferStats) values() (last, min, max int) {
	if !b.set {
		return -1, -1, -1
	}
	return b.last, b.min, b.max
}

func (b *bufferStats) add(n int) {
	if !b.set || n < b.min {
		b.min = n
	}
	if !b.set || n > b.max {
		b.max = n
	}
	b.last, b.set = n, true
}

// proposalSizes returns the proposal sizes (srvr's "Proposal sizes
// last/min/max", mntr's zk_*_proposal_size).
func (s *serverStats) proposalSizes() bufferStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.proposals
}

// observeApplied counts an applied log entry of n bytes: its writes per
// namespace, and, on a leader, its size as a proposal.
func (s *Server) observeApplied(n int, txn *znode.Txn, results []znode.Result, events []znode.Event) {
	s.stats.applied(txn, results, events)
	if s.ens != nil && s.isLeader() {
		s.stats.mu.Lock()
		s.stats.mu.proposals.add(n)
		s.stats.mu.Unlock()
	}
}

// configWritten counts the write of an ensemble's /zookeeper/config at
// start: ZooKeeper's servers write it when they load the configuration.
func (s *serverStats) configWritten(cfg Config) {
	if len(cfg.Servers) > 0 {
		s.write("/zookeeper/config", int64(len(cfg.DynamicConfigText())))
	}
}

func newServerStats() *serverStats {
	s := &serverStats{}
	s.mu.reads = map[string]*summary{}
	s.mu.writes = map[string]*summary{}
	s.mu.ephemeralOwners = map[int64]bool{}
	return s
}

// summary is ZooKeeper's AvgMinMaxCounter: count, total, min and max of a
// series of values.
type summary struct {
	count, total, min, max int64
}

func (s *summary) add(v int64) {
	if s.count == 0 || v < s.min {
		s.min = v
	}
	if s.count == 0 || v > s.max {
		s.max = v
	}
	s.count++
	s.total += v
}

// avg is total/count rounded to 4 places, as AvgMinMaxCounter.getAvg.
func (s *summary) avg() float64 {
	if s.count == 0 {
		return 0
	}
	return math.Round(float64(s.total)/float64(s.count)*10000) / 10000
}

// observe records one request's latency; write: it went through the log.
func (s *serverStats) observe(d time.Duration, write bool) {
	ms := d.Milliseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.latency.add(ms)
	if write {
		s.mu.updateLatency.add(ms)
	} else {
		s.mu.readLatency.add(ms)
	}
}

// latencySummary is a summary with a histogram of its values, for the
// summaries whose percentiles mntr and Prometheus report.
type latencySummary struct {
	summary
	hist latencyHistogram
}

func (l *latencySummary) add(v int64) {
	l.summary.add(v)
	l.hist.add(v)
}

// requestLatencies returns copies of the read and the update latency
// summaries.
func (s *serverStats) requestLatencies() (read, update latencySummary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.readLatency, s.mu.updateLatency
}

// latency returns min, average and max latency in milliseconds.
func (s *serverStats) latency() (minMs int64, avgMs float64, maxMs int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.mu.latency
	return l.min, l.avg(), l.max
}

// reset clears the counters (srst).
func (s *serverStats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.latency = summary{}
	s.mu.readLatency, s.mu.updateLatency = latencySummary{}, latencySummary{}
}

// namespace is the first component of a path ("/a/b" -> "a"), or "" for
// the root, as DataTree.getTopNamespace.
func namespace(path string) string {
	ns, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return ns
}

// javaLen is the length of s as Java's String.length counts it (UTF-16
// code units): ZooKeeper's byte counts of paths use it.
func javaLen(s string) int64 {
	n := int64(0)
	for _, r := range s {
		n += int64(utf16.RuneLen(r))
	}
	return n
}

// statOverheadBytes is DataTree.STAT_OVERHEAD_BYTES, the wire size of a
// Stat, which every counted read adds.
const statOverheadBytes = 6*8 + 5*4

// read counts a successful getData, exists or getChildren of path that
// returned n bytes of data or child names (DataTree.updateReadStat).
func (s *serverStats) read(path string, n int64) {
	if namespace(path) != "" {
		s.countNamespace(path, javaLen(path)+n+statOverheadBytes, true)
	}
}

// readChildren counts a getChildren: the bytes are the child names'.
func (s *serverStats) readChildren(path string, children []string) {
	if namespace(path) == "" {
		return // the root's listing is the hot read; it counts nowhere
	}
	n := int64(0)
	for _, ch := range children {
		n += javaLen(ch)
	}
	s.read(path, n)
}

// applied counts the writes of a txn by namespace, as DataTree's
// createNode, deleteNode and setData do (updateWriteStat): the path's
// length plus the data written; a delete writes no data. The ephemerals a
// closeSession deletes count as deletes.
func (s *serverStats) applied(txn *znode.Txn, results []znode.Result, events []znode.Event) {
	for i := range txn.Ops {
		if i >= len(results) || results[i].Err != zkproto.ErrOK {
			if txn.Multi {
				return // a failed multi wrote nothing (its results before the failure say ok)
			}
			continue
		}
	}
	for i, op := range txn.Ops {
		if i >= len(results) || results[i].Err != zkproto.ErrOK {
			continue
		}
		switch op.Type {
		case zkproto.OpCreate, zkproto.OpCreate2, zkproto.OpCreateContainer, zkproto.OpCreateTTL:
			s.write(results[i].Path, int64(len(op.Data)))
			if op.Mode.Ephemeral() {
				s.setEphemeralOwner(txn.Session, true)
			}
		case zkproto.OpSetData:
			s.write(op.Path, int64(len(op.Data)))
		case zkproto.OpDelete, zkproto.OpDeleteContainer:
			s.write(op.Path, 0)
		case zkproto.OpCloseSession:
			s.setEphemeralOwner(txn.Session, false)
			for _, ev := range events {
				if ev.Type == zkproto.EventNodeDeleted {
					s.write(ev.Path, 0)
				}
			}
		}
	}
}

func (s *serverStats) setEphemeralOwner(id int64, owns bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if owns {
		s.mu.ephemeralOwners[id] = true
	} else {
		delete(s.mu.ephemeralOwners, id)
	}
}

// ownedEphemerals reports whether session id created an ephemeral since it
// opened.
func (s *serverStats) ownedEphemerals(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.ephemeralOwners[id]
}

func (s *serverStats) write(path string, n int64) {
	s.countNamespace(path, javaLen(path)+n, false)
}

func (s *serverStats) countNamespace(path string, n int64, read bool) {
	ns := namespace(path)
	if ns == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.mu.writes
	if read {
		m = s.mu.reads
	}
	sum := m[ns]
	if sum == nil {
		sum = &summary{}
		m[strings.Clone(ns)] = sum // path may alias a request frame (getDataNow)
	}
	sum.add(n)
}

// namespaceLines renders the per-namespace summary sets as mntr lines.
func (s *serverStats) namespaceLines() [][2]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][2]string
	for _, set := range []struct {
		suffix string
		m      map[string]*summary
	}{{"read_per_namespace", s.mu.reads}, {"write_per_namespace", s.mu.writes}} {
		names := make([]string, 0, len(set.m))
		for ns := range set.m {
			names = append(names, ns)
		}
		sort.Strings(names)
		for _, ns := range names {
			out = append(out, summaryLines(ns+"_"+set.suffix, *set.m[ns], nil, false)...)
		}
	}
	return out
}

// summaryLines renders one summary as mntr does: zk_avg_, zk_min_,
// zk_max_, zk_cnt_ and zk_sum_ keys, plus, for a summary with
// DetailLevel.ADVANCED (percentiles), the p50, p95, p99 and p999 of hist
// (nil for a summary zkafka does not measure: all zero).
func summaryLines(name string, s summary, hist *latencyHistogram, percentiles bool) [][2]string {
	out := [][2]string{
		{"zk_avg_" + name, javaDouble(s.avg())},
		{"zk_min_" + name, strconv.FormatInt(s.min, 10)},
		{"zk_max_" + name, strconv.FormatInt(s.max, 10)},
		{"zk_cnt_" + name, strconv.FormatInt(s.count, 10)},
		{"zk_sum_" + name, strconv.FormatInt(s.total, 10)},
	}
	if percentiles {
		for _, p := range []struct {
			name string
			q    float64
		}{{"p50", 0.5}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999}} {
			var v int64
			if hist != nil {
				v = hist.quantile(p.q, s.max)
			}
			out = append(out, [2]string{"zk_" + p.name + "_" + name, strconv.FormatInt(v, 10)})
		}
	}
	return out
}

// javaDouble formats f as Java's Double.toString does for the values the
// four-letter words print: "2.0", "0.3333", "1.0E-4".
func javaDouble(f float64) string {
	if f != 0 && (math.Abs(f) < 1e-3 || math.Abs(f) >= 1e7) {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// measuredLatencies are the percentile summaries zkafka measures, by their
// mntr names.
type measuredLatencies struct{ read, update latencySummary }

func (s *serverStats) measuredLatencies() *measuredLatencies {
	read, update := s.requestLatencies()
	return &measuredLatencies{read, update}
}

// of returns the summary and histogram of name, zero and nil for the
// summaries zkafka does not measure.
func (m *measuredLatencies) of(name string) (summary, *latencyHistogram) {
	switch name {
	case "readlatency":
		return m.read.summary, &m.read.hist
	case "updatelatency":
		return m.update.summary, &m.update.hist
	}
	return summary{}, nil
}
