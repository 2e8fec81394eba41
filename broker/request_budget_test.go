package broker

import (
	"testing"
	"time"
)

const kib = 1 << 10

// held is the account's charge, read under the budget's lock.
func (a *budgetAccount) heldNow() int64 {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	return a.held
}

func (b *requestBudget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.mu.wait)
}

// checkFor polls cond every millisecond for up to 10 s.
func checkFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type takeResult struct {
	buf []byte
	err error
}

func takeAsync(a *budgetAccount, n int, done <-chan struct{}) chan takeResult {
	ch := make(chan takeResult, 1)
	go func() {
		buf, err := a.take(n, done)
		ch <- takeResult{buf, err}
	}()
	return ch
}

func mustTake(t *testing.T, a *budgetAccount, n int) []byte {
	t.Helper()
	buf, err := a.take(n, nil)
	if err != nil || cap(buf) < n || len(buf) != 0 {
		t.Fatalf("take %d: cap %d len %d err %v", n, cap(buf), len(buf), err)
	}
	return buf
}

func checkUsed(t *testing.T, b *requestBudget, used, pooled int64) {
	t.Helper()
	if u, p := b.stats(); u != used || p != pooled {
		t.Fatalf("used %d pooled %d, want %d and %d", u, p, used, pooled)
	}
}

func TestRequestBudgetWaitsAtTheBound(t *testing.T) {
	b := newRequestBudget(1024*kib, 0)
	x, y, z := b.newAccount(nil), b.newAccount(nil), b.newAccount(nil)
	bx := mustTake(t, x, 512*kib)
	by := mustTake(t, y, 512*kib)
	checkUsed(t, b, 1024*kib, 0)
	ch := takeAsync(z, 256*kib, nil)
	checkFor(t, "the third take waits", func() bool { return b.waiting() == 1 })
	checkUsed(t, b, 1024*kib, 0)
	x.put(bx) // to the pool, and at once to the waiter: the same memory
	r := <-ch
	if r.err != nil || cap(r.buf) != 512*kib || &r.buf[:1][0] != &bx[:1][0] {
		t.Fatalf("waiter: cap %d err %v, want x's pooled buffer", cap(r.buf), r.err)
	}
	checkUsed(t, b, 1024*kib, 0)
	if x.heldNow() != 0 || z.heldNow() != 512*kib {
		t.Fatalf("held x %d z %d", x.heldNow(), z.heldNow())
	}
	y.put(by)
	z.close(r.buf)
	checkUsed(t, b, 1024*kib, 1024*kib) // all pooled, still charged
	// A new size that no pooled buffer holds drops pooled ones for room.
	big := mustTake(t, x, 768*kib)
	if u, p := b.stats(); u > 1024*kib || p != 0 || u != 768*kib {
		t.Fatalf("after a 768 KiB take: used %d pooled %d", u, p)
	}
	x.close(big)
}

func TestRequestBudgetSmallAndUnbounded(t *testing.T) {
	b := newRequestBudget(1024*kib, 0)
	a := b.newAccount(nil)
	small := mustTake(t, a, baseFrameBytes) // the base size is never charged
	a.put(small)
	checkUsed(t, b, 0, 0)
	for _, ub := range []*requestBudget{nil, newRequestBudget(-1, 0)} {
		ua := ub.newAccount(nil)
		buf := mustTake(t, ua, 64<<20)
		ua.put(buf)
		ua.beginFrame()
		if !ua.endFrame() {
			t.Fatal("unbounded: evicted")
		}
		ua.close(nil)
		if u, p := ub.stats(); u != 0 || p != 0 {
			t.Fatalf("unbounded budget counted %d %d", u, p)
		}
	}
}

func TestRequestBudgetWaiterLeavesWhenDone(t *testing.T) {
	b := newRequestBudget(512*kib, 0)
	x, y := b.newAccount(nil), b.newAccount(nil)
	bx := mustTake(t, x, 512*kib)
	done := make(chan struct{})
	ch := takeAsync(y, 256*kib, done)
	checkFor(t, "y waits", func() bool { return b.waiting() == 1 })
	close(done)
	if r := <-ch; r.err != errConnClosing {
		t.Fatalf("take after done: %v", r.err)
	}
	if b.waiting() != 0 || y.heldNow() != 0 {
		t.Fatalf("waiters %d, y holds %d", b.waiting(), y.heldNow())
	}
	x.put(bx)
	checkUsed(t, b, 512*kib, 512*kib)
}

// TestRequestBudgetEvictsTheLargestReader: when charges wait and nothing
// moves, stalled evicts the in-frame account that holds the most; an
// account whose request is being handled is never evicted.
func TestRequestBudgetEvictsTheLargestReader(t *testing.T) {
	b := newRequestBudget(1024*kib, 0)
	var evicted []string
	acct := func(name string) *budgetAccount {
		return b.newAccount(func() { evicted = append(evicted, name) })
	}
	handled, small, large, fresh := acct("handled"), acct("small"), acct("large"), acct("fresh")
	handled.beginFrame()
	bh := mustTake(t, handled, 512*kib)
	if !handled.endFrame() {
		t.Fatal("handled: evicted")
	}
	small.beginFrame()
	mustTake(t, small, 128*kib)
	large.beginFrame()
	bl := mustTake(t, large, 384*kib)
	if v := b.stalled(); v != nil {
		t.Fatalf("evicted %v with nothing waiting", evicted)
	}
	fresh.beginFrame()
	ch := takeAsync(fresh, 384*kib, nil)
	checkFor(t, "fresh waits", func() bool { return b.waiting() == 1 })
	if v := b.stalled(); v != large || len(evicted) != 1 || evicted[0] != "large" {
		t.Fatalf("evicted %v, want large", evicted)
	}
	if large.endFrame() {
		t.Fatal("large: endFrame after eviction reports true")
	}
	if _, err := large.take(256*kib, nil); err != errBudgetEvicted {
		t.Fatalf("take on an evicted account: %v", err)
	}
	large.close(bl) // its reader gives the buffer back
	r := <-ch
	if r.err != nil || cap(r.buf) < 384*kib {
		t.Fatalf("fresh: %v", r.err)
	}
	// Next stuck round: small is now the only evictable one; handled never is.
	ch2 := takeAsync(acct("late"), 512*kib, nil)
	checkFor(t, "late waits", func() bool { return b.waiting() == 1 })
	b.stalled() // the grant to fresh was progress
	b.stalled()
	b.stalled()
	if len(evicted) != 3 || evicted[1] != "fresh" || evicted[2] != "small" {
		t.Fatalf("evicted %v, want large, fresh, small", evicted)
	}
	handled.put(bh)
	if r := <-ch2; r.err != nil {
		t.Fatalf("late: %v", r.err)
	}
}

// TestRequestBudgetEvictsAWaiter: an evicted account that is waiting for
// more gets errBudgetEvicted.
func TestRequestBudgetEvictsAWaiter(t *testing.T) {
	b := newRequestBudget(512*kib, 0)
	x, y := b.newAccount(nil), b.newAccount(nil)
	x.beginFrame()
	bx := mustTake(t, x, 256*kib)
	y.beginFrame()
	mustTake(t, y, 128*kib)
	chx := takeAsync(x, 512*kib, nil)
	checkFor(t, "x waits", func() bool { return b.waiting() == 1 })
	chy := takeAsync(y, 256*kib, nil)
	checkFor(t, "y waits", func() bool { return b.waiting() == 2 })
	b.stalled() // progress from the grants
	if v := b.stalled(); v != x {
		t.Fatalf("evicted %p, want x", v)
	}
	if r := <-chx; r.err != errBudgetEvicted {
		t.Fatalf("x: %v", r.err)
	}
	x.close(bx)
	if r := <-chy; r.err != nil {
		t.Fatalf("y: %v", r.err)
	}
}

func TestRequestBudgetTrimsThePool(t *testing.T) {
	b := newRequestBudget(1024*kib, 0)
	now := time.Unix(1000, 0)
	b.now = func() time.Time { return now }
	a := b.newAccount(nil)
	old, recent := mustTake(t, a, 256*kib), mustTake(t, a, 128*kib)
	a.put(old)
	now = now.Add(poolIdle)
	a.put(recent)
	b.mu.Lock()
	b.trimLocked(now.Add(-poolIdle))
	b.mu.Unlock()
	checkUsed(t, b, 128*kib, 128*kib)
	b.mu.Lock()
	b.trimLocked(now)
	b.mu.Unlock()
	checkUsed(t, b, 0, 0)
}

// TestRequestBudgetPatienceTimer: with a patience timer, a stuck budget
// evicts on its own.
func TestRequestBudgetPatienceTimer(t *testing.T) {
	b := newRequestBudget(512*kib, 10*time.Millisecond)
	stuck := b.newAccount(nil)
	evicted := make(chan struct{})
	stuck.onEvict = func() { close(evicted) }
	stuck.beginFrame()
	buf := mustTake(t, stuck, 512*kib)
	ch := takeAsync(b.newAccount(nil), 256*kib, nil)
	select {
	case <-evicted:
	case <-time.After(10 * time.Second):
		t.Fatal("not evicted after 10 s")
	}
	stuck.close(buf)
	if r := <-ch; r.err != nil {
		t.Fatal(r.err)
	}
}
