package quorum

import (
	"sync"
	"time"

	"github.com/zkafka/zkafka/zkproto"
)

// connStats are one connection's reply statistics, as cons shows them
// (ServerCnxn.updateStatsForResponse).
type connStats struct {
	mu       sync.Mutex
	replies  int64
	lastOp   zkproto.OpCode // named when shown (opName): no lookup per reply
	lastCxid int32
	lastZxid int64
	lastResp time.Time
	last     int64 // latency of the last reply, ms
	latency  summary
}

// observeReply accounts for one reply written to the client: to a request
// of op received at start (zero: not counted in the latencies), a write or
// not.
func (c *conn) observeReply(op zkproto.OpCode, start time.Time, write bool, hdr zkproto.ReplyHeader) {
	c.sent.Add(1)
	c.srv.stats.sent.Add(1)
	if start.IsZero() {
		return
	}
	now := time.Now()
	lat := now.Sub(start)
	c.srv.stats.observe(lat, write)
	st := &c.cstats
	st.mu.Lock()
	defer st.mu.Unlock()
	st.replies++
	st.lastOp = op
	st.lastCxid = hdr.Xid
	st.lastZxid = hdr.Zxid
	st.lastResp = now
	st.last = lat.Milliseconds()
	st.latency.add(st.last)
}

// opNames are FinalRequestProcessor's lastOp abbreviations.
var opNames = map[zkproto.OpCode]string{
	zkproto.OpPing: "PING", zkproto.OpCreateSession: "SESS", zkproto.OpMulti: "MULT",
	zkproto.OpMultiRead: "MLTR", zkproto.OpCreate: "CREA", zkproto.OpCreate2: "CREA",
	zkproto.OpCreateTTL: "CREA", zkproto.OpCreateContainer: "CREA", zkproto.OpDelete: "DELE",
	zkproto.OpDeleteContainer: "DELE", zkproto.OpSetData: "SETD", zkproto.OpReconfig: "RECO",
	zkproto.OpSetACL: "SETA", zkproto.OpCloseSession: "CLOS", zkproto.OpSync: "SYNC",
	zkproto.OpCheck: "CHEC", zkproto.OpExists: "EXIS", zkproto.OpGetData: "GETD",
	zkproto.OpSetWatches: "SETW", zkproto.OpSetWatches2: "STW2", zkproto.OpAddWatch: "ADDW",
	zkproto.OpGetACL: "GETA", zkproto.OpGetChildren: "GETC", zkproto.OpGetChildren2: "GETC",
	zkproto.OpGetAllChildrenNumber: "GETACN", zkproto.OpGetEphemerals: "GETE",
	zkproto.OpCheckWatches: "CHKW", zkproto.OpRemoveWatches: "REMW", zkproto.OpWhoAmI: "HOMI",
}

func opName(op zkproto.OpCode) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return "NA"
}

// connStatsView is a copy of connStats with ZooKeeper's initial values
// filled in: before any reply lop is NA, lcxid and lzxid are -1.
type connStatsView struct {
	lastOp     string
	lastCxid   int32
	lastZxid   int64
	lastRespMs int64
	last       int64
	latency    summary
	avgLatency int64 // total/count in whole ms, as cons prints it
}

func (st *connStats) snapshot() connStatsView {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.replies == 0 {
		return connStatsView{lastOp: "NA", lastCxid: -1, lastZxid: -1}
	}
	return connStatsView{lastOp: opName(st.lastOp), lastCxid: st.lastCxid, lastZxid: st.lastZxid,
		lastRespMs: st.lastResp.UnixMilli(), last: st.last, latency: st.latency,
		avgLatency: st.latency.total / st.latency.count}
}

// reset clears the statistics (crst).
func (st *connStats) reset() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.replies, st.lastOp, st.lastCxid, st.lastZxid, st.lastResp, st.last, st.latency = 0, 0, 0, 0, time.Time{}, 0, summary{}
}
