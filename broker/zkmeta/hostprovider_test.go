package zkmeta

import "testing"

// TestQuickHosts: with one server, the DNS provider asks for the 1 s
// pause at every reconnect after a session; quickHosts skips it for the
// first two (the expiry answer, then the new session), and pauses again
// when the server stays away; a new session gives two more.
func TestQuickHosts(t *testing.T) {
	h := newQuickHosts()
	if err := h.Init([]string{"127.0.0.1:2181"}); err != nil {
		t.Fatal(err)
	}
	next := func() bool { _, retry := h.Next(); return retry }
	if next() {
		t.Fatal("first connect paused")
	}
	h.Connected()
	if next() || next() {
		t.Fatal("a reconnect right after a session paused")
	}
	if !next() || !next() {
		t.Fatal("a server that stays away is not paused for")
	}
	h.Connected()
	if next() {
		t.Fatal("after a new session the first reconnect paused")
	}
}
