package quorum

import (
	"sync"
	"time"

	"github.com/zkafka/zkafka/store/znode"
)

// quotaLogEvery is how often a quota warning is logged at most; ZooKeeper
// rate-limits its "Quota exceeded" lines too (RateLogger).
const quotaLogEvery = time.Second

// quotaLog rate-limits the quota warnings.
type quotaLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// logQuotaWarnings logs the "Quota exceeded" warnings of a txn whose
// client is connected here: every server applies the txn, and the one that
// answers the client speaks for it, as ZooKeeper's leader alone does.
func (s *Server) logQuotaWarnings(txn *znode.Txn, results []znode.Result) {
	for i := range results {
		w := results[i].Warning
		if w == "" || s.connOf(txn.Session) == nil {
			continue
		}
		s.quotaLog.mu.Lock()
		now := time.Now()
		if now.Sub(s.quotaLog.last) < quotaLogEvery {
			s.quotaLog.suppressed++
			s.quotaLog.mu.Unlock()
			continue
		}
		n := s.quotaLog.suppressed
		s.quotaLog.last, s.quotaLog.suppressed = now, 0
		s.quotaLog.mu.Unlock()
		s.log.Warn(w, "enforced", txn.EnforceQuota, "suppressedSinceLast", n)
	}
}
