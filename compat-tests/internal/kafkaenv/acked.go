package kafkaenv

import (
	"sync"
	"testing"
	"time"
)

// Acked is the numbers of the records a producer under test has had
// acknowledged, in the order of their acknowledgements: the producer's
// callbacks add to it while the test waits on it from its own goroutine.
type Acked struct {
	mu sync.Mutex
	ns []int
}

// Add records that record n was acknowledged.
func (a *Acked) Add(n int) {
	a.mu.Lock()
	a.ns = append(a.ns, n)
	a.mu.Unlock()
}

// Len is how many records have been acknowledged.
func (a *Acked) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.ns)
}

// List is a copy of the acknowledged numbers.
func (a *Acked) List() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]int(nil), a.ns...)
}

// WaitFor waits until at least n records are acknowledged, polling, and
// fails t when that takes longer than timeout.
func (a *Acked) WaitFor(t testing.TB, n int, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		got := a.Len()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d records acknowledged", got, n)
		}
	}
}
