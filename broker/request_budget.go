package broker

import (
	"errors"
	"slices"
	"sync"
	"time"
)

// DefaultQueuedMaxRequestBytes is zkafka's default queued.max.request.bytes.
// Kafka's default is -1 (unbounded) and it requires a bound to be at least
// socket.request.max.bytes, so that the largest request can be read; this
// is the least such bound with the default socket.request.max.bytes. With
// it, request buffers take at most 100 MiB however many clients send,
// which keeps the broker's resident memory under 300 MB when hostile
// clients announce huge requests (compat-tests/kafkastorm).
const DefaultQueuedMaxRequestBytes = 100 << 20

const (
	// budgetPatience is how long charges may wait with nothing moving
	// before the budget evicts a connection (see requestBudget).
	budgetPatience = time.Second
	// poolIdle is how long a buffer stays in the pool unused before it is
	// dropped for the garbage collector.
	poolIdle = 5 * time.Second
)

// requestBudget bounds the bytes of request buffers that all connections
// hold together (queued.max.request.bytes), and recycles those buffers.
//
// A connection takes a larger buffer from the budget before it grows its
// request buffer (take) and gives the old one back (put). take charges the
// buffer's capacity to the connection's account; a charge that does not
// fit waits, and while it waits the connection reads nothing more from its
// socket, so the client's bytes stay in the kernel's buffers (backpressure)
// rather than in ours. The buffers are anonymous mappings outside the Go
// heap (mapBuffer), so the bound is on resident memory itself: the garbage
// collector, which lets the heap grow to twice what is live before it
// collects, never sees them. Buffers given back stay in a pool, still
// charged, for the next take to reuse, and are unmapped when a new charge
// needs their room or after poolIdle unused. So hostile clients that
// announce large requests and vanish make the broker reuse the same memory.
//
// The pool relies on the rule the connection loop already follows: nothing
// refers to a request's frame once its handler has returned.
//
// Waiting alone can deadlock: clients that announce large requests and
// send their bytes slowly, or never finish them, can hold the whole budget
// between them while each waits for more or for its own client. So when
// charges have waited for budgetPatience and nothing was given back or
// granted meanwhile, the budget evicts the account holding the most among
// those in the middle of reading a request (never one whose request is
// being handled: it will finish and give back): its connection is closed,
// and its reader, woken by the close, gives its buffer back. A request
// being read honestly is evicted only when the budget is exhausted and
// stuck; its client retries.
//
// Buffers of baseFrameBytes or less, the buffer each connection keeps for
// small requests, are neither charged nor pooled: they are a fixed cost per
// connection, like its read buffer. An account is used by its connection's
// reader goroutine only; the budget is safe for concurrent use. A budget
// whose limit is <= 0 (or a nil one) bounds and pools nothing.
type requestBudget struct {
	limit    int64
	patience time.Duration // 0: no eviction timer (tests call stalled)
	now      func() time.Time

	mu struct {
		sync.Mutex
		// Invariant: used == pooled + the held of every account <= limit.
		used   int64
		pooled int64
		pool   []pooledBuffer  // given back, oldest first
		wait   []*budgetWaiter // in arrival order; served first fit
		// inFrame are the accounts reading a request while holding
		// bytes: the ones eviction may pick.
		inFrame map[*budgetAccount]struct{}
		// progress is set by every grant and give-back; the patience
		// timer evicts only if it is still clear when the timer fires.
		progress bool
		timer    *time.Timer // patience; running while charges wait
		trim     *time.Timer // running while the pool is not empty
	}
}

type pooledBuffer struct {
	buf   []byte
	since time.Time
}

// errBudgetEvicted is returned to an evicted account's reader.
var errBudgetEvicted = errors.New("request memory exhausted (queued.max.request.bytes): connection evicted")

// errConnClosing is returned by take when its done channel closed.
var errConnClosing = errors.New("connection closing")

// budgetAccount is one connection's share of the budget.
type budgetAccount struct {
	b *requestBudget
	// onEvict closes the connection; called once, without b.mu held.
	onEvict func()

	// Guarded by b.mu.
	held    int64 // capacity of the charged buffers the connection has
	reading bool  // between beginFrame and endFrame
	evicted bool
}

type budgetWaiter struct {
	acct  *budgetAccount
	n     int
	ready chan grant // buffered(1)
}

// grant answers a waiter: a pooled buffer, or (buf nil, err nil) room
// reserved for a new one of the size asked, or an error.
type grant struct {
	buf []byte
	err error
}

func newRequestBudget(limit int64, patience time.Duration) *requestBudget {
	b := &requestBudget{limit: limit, patience: patience, now: time.Now}
	b.mu.inFrame = map[*budgetAccount]struct{}{}
	return b
}

// bounded reports whether anything is counted.
func (b *requestBudget) bounded() bool { return b != nil && b.limit > 0 }

// newAccount returns an account; onEvict is called if the budget evicts it.
func (b *requestBudget) newAccount(onEvict func()) *budgetAccount {
	return &budgetAccount{b: b, onEvict: onEvict}
}

// stats returns the bytes charged in all and, of them, those pooled.
func (b *requestBudget) stats() (used, pooled int64) {
	if !b.bounded() {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mu.used, b.mu.pooled
}

// charged reports whether a buffer of capacity n goes through the budget.
func charged(n int) bool { return n > baseFrameBytes }

// take returns an empty buffer of capacity at least n, charged to the
// account: a pooled one, or a new one once n fits in the limit. It waits
// until then, or until done is closed (errConnClosing) or the account is
// evicted (errBudgetEvicted). A connection takes while it reads a request,
// so take marks the account as reading (as beginFrame does).
func (a *budgetAccount) take(n int, done <-chan struct{}) ([]byte, error) {
	b := a.b
	if !b.bounded() || !charged(n) {
		return make([]byte, 0, n), nil
	}
	b.mu.Lock()
	if a.evicted {
		b.mu.Unlock()
		return nil, errBudgetEvicted
	}
	a.reading = true
	var g grant
	var ok bool
	if len(b.mu.wait) == 0 {
		g, ok = b.grantLocked(a, n)
	}
	if ok {
		b.mu.Unlock()
		return a.materialize(g, n)
	}
	w := &budgetWaiter{acct: a, n: n, ready: make(chan grant, 1)}
	b.mu.wait = append(b.mu.wait, w)
	b.serveWaitersLocked()
	b.startPatienceLocked()
	b.mu.Unlock()
	select {
	case g = <-w.ready:
		return a.materialize(g, n)
	case <-done:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case g = <-w.ready: // served meanwhile: give it back
		if g.err == nil {
			b.refundLocked(a, g.buf, n)
		}
	default:
		b.mu.wait = slices.DeleteFunc(b.mu.wait, func(x *budgetWaiter) bool { return x == w })
	}
	return nil, errConnClosing
}

// materialize turns a grant into a buffer: a pooled one as it is, a
// reservation into a new mapping (refunded if mapping fails).
func (a *budgetAccount) materialize(g grant, n int) ([]byte, error) {
	if g.err != nil || g.buf != nil {
		return g.buf, g.err
	}
	buf, err := mapBuffer(n)
	if err != nil {
		a.b.mu.Lock()
		a.b.refundLocked(a, nil, n)
		a.b.mu.Unlock()
		return nil, err
	}
	return buf, nil
}

// put gives a buffer back: it goes to the pool, still charged.
func (a *budgetAccount) put(buf []byte) {
	b := a.b
	if !b.bounded() || !charged(cap(buf)) {
		return
	}
	b.mu.Lock()
	b.putLocked(a, buf)
	b.mu.Unlock()
}

// beginFrame marks the account as reading a request: until endFrame it
// may be evicted.
func (a *budgetAccount) beginFrame() {
	b := a.b
	if !b.bounded() {
		return
	}
	b.mu.Lock()
	a.reading = true
	if a.held > 0 && !a.evicted {
		b.mu.inFrame[a] = struct{}{}
	}
	b.mu.Unlock()
}

// endFrame marks the request as read: it is handled now and cannot be
// evicted. It reports false if the account was evicted (the connection is
// closing; the request must not be handled).
func (a *budgetAccount) endFrame() bool {
	b := a.b
	if !b.bounded() {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a.reading = false
	delete(b.mu.inFrame, a)
	return !a.evicted
}

// close gives buf back and withdraws the account.
func (a *budgetAccount) close(buf []byte) {
	b := a.b
	if !b.bounded() {
		return
	}
	b.mu.Lock()
	a.reading = false
	delete(b.mu.inFrame, a)
	if charged(cap(buf)) {
		b.putLocked(a, buf)
	}
	b.mu.Unlock()
}

// grantLocked serves a charge of n now if it can: with the smallest pooled
// buffer that holds n, or with room for a new one (dropping pooled buffers
// if that makes the room).
func (b *requestBudget) grantLocked(a *budgetAccount, n int) (grant, bool) {
	best := -1
	for i, p := range b.mu.pool {
		if cap(p.buf) >= n && (best < 0 || cap(p.buf) < cap(b.mu.pool[best].buf)) {
			best = i
		}
	}
	if best >= 0 {
		buf := b.mu.pool[best].buf
		b.mu.pool = slices.Delete(b.mu.pool, best, best+1)
		b.mu.pooled -= int64(cap(buf))
		b.chargeLocked(a, int64(cap(buf)))
		return grant{buf: buf}, true
	}
	need := int64(n)
	if b.mu.used-b.mu.pooled+need > b.limit {
		return grant{}, false
	}
	for b.mu.used+need > b.limit { // drop the oldest pooled buffers
		b.dropPooledLocked(0)
	}
	b.mu.used += need
	b.chargeLocked(a, need)
	return grant{}, true
}

// chargeLocked adds n bytes (already in used) to the account.
func (b *requestBudget) chargeLocked(a *budgetAccount, n int64) {
	a.held += n
	b.mu.progress = true
	if a.reading && !a.evicted {
		b.mu.inFrame[a] = struct{}{}
	}
}

func (b *requestBudget) putLocked(a *budgetAccount, buf []byte) {
	c := int64(cap(buf))
	a.held -= c
	if a.held <= 0 {
		a.held = 0
		delete(b.mu.inFrame, a)
	}
	b.mu.pool = append(b.mu.pool, pooledBuffer{buf: buf[:0], since: b.now()})
	b.mu.pooled += c
	b.mu.progress = true
	b.serveWaitersLocked()
	b.startTrimLocked()
}

// refundLocked undoes a grant that its waiter no longer wants.
func (b *requestBudget) refundLocked(a *budgetAccount, buf []byte, n int) {
	if buf != nil {
		b.putLocked(a, buf)
		return
	}
	a.held -= int64(n)
	b.mu.used -= int64(n)
	b.serveWaitersLocked()
}

func (b *requestBudget) dropPooledLocked(i int) {
	c := int64(cap(b.mu.pool[i].buf))
	unmapBuffer(b.mu.pool[i].buf)
	b.mu.pool = slices.Delete(b.mu.pool, i, i+1)
	b.mu.pooled -= c
	b.mu.used -= c
}

// serveWaitersLocked serves, in arrival order, every waiting charge that
// can be served.
func (b *requestBudget) serveWaitersLocked() {
	kept := b.mu.wait[:0]
	for _, w := range b.mu.wait {
		if g, ok := b.grantLocked(w.acct, w.n); ok {
			w.ready <- g
			continue
		}
		kept = append(kept, w)
	}
	clear(b.mu.wait[len(kept):])
	b.mu.wait = kept
}

// startPatienceLocked starts the patience timer if charges wait and it is
// not running.
func (b *requestBudget) startPatienceLocked() {
	if b.patience <= 0 || b.mu.timer != nil || len(b.mu.wait) == 0 {
		return
	}
	b.mu.progress = false
	b.mu.timer = time.AfterFunc(b.patience, func() {
		b.mu.Lock()
		b.mu.timer = nil
		b.mu.Unlock()
		b.stalled()
		b.mu.Lock()
		b.startPatienceLocked()
		b.mu.Unlock()
	})
}

// stalled is the patience timer's action: if charges still wait and
// nothing moved since the timer started, it evicts the in-frame account
// that holds the most, and returns it (nil if it evicted none).
func (b *requestBudget) stalled() *budgetAccount {
	b.mu.Lock()
	if len(b.mu.wait) == 0 || b.mu.progress {
		b.mu.progress = false
		b.mu.Unlock()
		return nil
	}
	var victim *budgetAccount
	for a := range b.mu.inFrame {
		if victim == nil || a.held > victim.held {
			victim = a
		}
	}
	if victim == nil {
		b.mu.Unlock()
		return nil
	}
	victim.evicted = true
	delete(b.mu.inFrame, victim)
	for i, w := range b.mu.wait {
		if w.acct == victim {
			b.mu.wait = slices.Delete(b.mu.wait, i, i+1)
			w.ready <- grant{err: errBudgetEvicted}
			break
		}
	}
	b.mu.Unlock()
	if victim.onEvict != nil {
		victim.onEvict()
	}
	return victim
}

// startTrimLocked starts the pool's trim timer if the pool has buffers
// and it is not running.
func (b *requestBudget) startTrimLocked() {
	if b.mu.trim != nil || len(b.mu.pool) == 0 {
		return
	}
	b.mu.trim = time.AfterFunc(poolIdle, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.mu.trim = nil
		b.trimLocked(b.now().Add(-poolIdle))
		b.startTrimLocked()
	})
}

// trimLocked drops the pooled buffers given back before cutoff.
func (b *requestBudget) trimLocked(cutoff time.Time) {
	for len(b.mu.pool) > 0 && !b.mu.pool[0].since.After(cutoff) {
		b.dropPooledLocked(0)
	}
}
