package zkmeta

import (
	"sync"

	"github.com/go-zookeeper/zk"
)

// quickHosts is go-zookeeper's DNSHostProvider without its pause on the
// first reconnects after a session was established. The DNS provider
// reports "retry start" — and the client sleeps a second before dialing
// — whenever it comes back to the server it last had a session with; with
// one server, that is every reconnect. A broker woken from a pause longer
// than its session (SIGSTOP, a long GC) reconnects twice in a row: once
// to be told its session expired, once for a new session. Two seconds of
// sleeping there delay its re-registration and its followers' and
// clients' recovery (the fault table's leader-pause). quickHosts lets the
// quickReconnects attempts after each session go without the pause; a
// server that stays unreachable is still tried once a second.
type quickHosts struct {
	*zk.DNSHostProvider
	mu    sync.Mutex
	quick int
}

const quickReconnects = 2

func newQuickHosts() *quickHosts { return &quickHosts{DNSHostProvider: &zk.DNSHostProvider{}} }

// Next is the DNS provider's, with retryStart cleared while quick
// reconnects remain.
func (h *quickHosts) Next() (string, bool) {
	server, retryStart := h.DNSHostProvider.Next()
	h.mu.Lock()
	defer h.mu.Unlock()
	if retryStart && h.quick > 0 {
		h.quick--
		retryStart = false
	}
	return server, retryStart
}

// Connected is called when a session is established (new or resumed).
func (h *quickHosts) Connected() {
	h.DNSHostProvider.Connected()
	h.mu.Lock()
	h.quick = quickReconnects
	h.mu.Unlock()
}
