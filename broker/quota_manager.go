package broker

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// quotaManager meters what each client uses of its quotas and says how
// long to throttle it, as Kafka's ClientQuotaManager (produce, fetch) and
// ClientRequestQuotaManager (request) do: record the usage at now, and if
// the rate is then above the client's quota, the throttle time that brings
// it back (rateMeter.throttleMs; for request_percentage at most one
// window, as Kafka bounds it). A kind is metered only once some quota of
// that kind has been set (Kafka's quotasEnabled; it stays on until the
// broker restarts); until then recording costs one atomic load.
type quotaManager struct {
	w   quotaWindow
	now func() time.Time
	// enabled[k] is set once a quota of kind k is known.
	enabled [numQuotaKinds]atomic.Bool
	mu      struct {
		sync.Mutex
		table  quotaTable
		meters map[quotaMeterKey]*quotaMeter
		swept  int64 // ms of the last sweep of idle meters
	}
}

// quotaMeterKey names a meter: the kind and the entity it is metered under
// (quotaTable.tags).
type quotaMeterKey struct {
	kind quotaKind
	tags quotaEntity
}

// quotaMeter is a rateMeter with the time it was last used, so that idle
// ones are dropped (Kafka expires its sensors after an hour).
type quotaMeter struct {
	rateMeter
	usedMs int64
}

// quotaMeterIdle is how long an unused meter is kept.
const quotaMeterIdle = time.Hour

func newQuotaManager(cfg QuotaConfig, now func() time.Time) *quotaManager {
	q := &quotaManager{w: quotaWindow{num: cfg.WindowNum, sizeMs: int64(cfg.WindowSize / time.Millisecond)}, now: now}
	q.mu.table = quotaTable{}
	q.mu.meters = map[quotaMeterKey]*quotaMeter{}
	return q
}

// setTable replaces every quota (loading at start).
func (q *quotaManager) setTable(t quotaTable) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.mu.table = t
	for _, v := range t {
		q.enableLocked(v)
	}
}

// set replaces one entity's quotas (empty: it has none).
func (q *quotaManager) set(e quotaEntity, v quotaValues) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if v.empty() {
		delete(q.mu.table, e)
		return
	}
	q.mu.table[e] = v
	q.enableLocked(v)
}

func (q *quotaManager) enableLocked(v quotaValues) {
	for k := range numQuotaKinds {
		if v.set[k] {
			q.enabled[k].Store(true)
		}
	}
}

// active reports whether kind k is metered at all.
func (q *quotaManager) active(k quotaKind) bool { return q.enabled[k].Load() }

// record adds v to the usage of kind k by (user, client) — the sanitized
// principal name and the client id — and returns the throttle time in
// milliseconds (0: within its quota, or no quota).
func (q *quotaManager) record(k quotaKind, user, client string, v float64) int64 {
	if !q.active(k) {
		return 0
	}
	nowMs := q.now().UnixMilli()
	client = sanitize(client)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sweepLocked(nowMs)
	tags := q.mu.table.tags(k, user, client)
	key := quotaMeterKey{k, tags}
	m := q.mu.meters[key]
	if m == nil {
		m = &quotaMeter{}
		q.mu.meters[key] = m
	}
	m.usedMs = nowMs
	m.record(q.w, v, nowMs)
	bound, ok := q.mu.table.limit(k, tags)
	if !ok {
		return 0
	}
	ms := m.throttleMs(q.w, bound, nowMs)
	if k == quotaRequest {
		ms = min(ms, q.w.sizeMs)
	}
	return ms
}

// unrecord takes back a recorded v (a throttled fetch sends no data, as
// Kafka's unrecordQuotaSensor).
func (q *quotaManager) unrecord(k quotaKind, user, client string, v float64) {
	if !q.active(k) {
		return
	}
	nowMs := q.now().UnixMilli()
	client = sanitize(client)
	q.mu.Lock()
	defer q.mu.Unlock()
	if m := q.mu.meters[quotaMeterKey{k, q.mu.table.tags(k, user, client)}]; m != nil {
		m.record(q.w, -v, nowMs)
	}
}

// maxInWindow is the most of kind k (user, client) may use at once without
// being throttled for sure: its quota times num-1 windows
// (getMaxValueInQuotaWindow; a consumer's fetch max_bytes is capped to it).
// ok is false without a quota.
func (q *quotaManager) maxInWindow(k quotaKind, user, client string) (float64, bool) {
	if !q.active(k) {
		return 0, false
	}
	client = sanitize(client)
	q.mu.Lock()
	defer q.mu.Unlock()
	bound, ok := q.mu.table.limit(k, q.mu.table.tags(k, user, client))
	return bound * float64(q.w.num-1) * float64(q.w.sizeMs) / 1000, ok
}

// sweepLocked drops the meters idle for quotaMeterIdle, once a minute.
func (q *quotaManager) sweepLocked(nowMs int64) {
	if nowMs-q.mu.swept < time.Minute.Milliseconds() {
		return
	}
	q.mu.swept = nowMs
	for k, m := range q.mu.meters {
		if nowMs-m.usedMs > quotaMeterIdle.Milliseconds() {
			delete(q.mu.meters, k)
		}
	}
}

// parseQuotaValue reads a quota value as Kafka writes it (Double.toString
// or a Long's digits).
func parseQuotaValue(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
