package quorum

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"
)

// passwordSecret plays the role of ZooKeeper's superSecret: a session's
// password is a function of its id and this constant, so any server of the
// ensemble (and a restarted one) can check a reconnecting client's password
// without replicating passwords.
const passwordSecret = "zkafka-session-secret-0xB3415C00"

// sessionPassword returns the 16-byte password of a session.
func sessionPassword(id int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(id))
	h := sha256.New()
	h.Write([]byte(passwordSecret))
	h.Write(b[:])
	return h.Sum(nil)[:16]
}

// sessionIDs hands out session ids the way ZooKeeper does: the server id in
// the top byte, then milliseconds since the epoch shifted so that ids from
// restarts do not collide, then a counter.
type sessionIDs struct {
	mu   sync.Mutex
	next int64
}

func newSessionIDs(serverID uint64, now time.Time) *sessionIDs {
	base := int64(uint64(now.UnixMilli()<<24) >> 8)
	return &sessionIDs{next: base | int64(serverID<<56)}
}

func (s *sessionIDs) nextID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	return s.next
}

// sessionTracker keeps the last time each session was heard from, so that
// the server that decides expiry (the standalone server, or the leader) can
// close sessions whose clients went quiet for longer than their timeout.
type sessionTracker struct {
	mu struct {
		sync.Mutex
		lastSeen map[int64]time.Time
		timeout  map[int64]time.Duration
		closing  map[int64]bool
	}
}

func newSessionTracker() *sessionTracker {
	t := &sessionTracker{}
	t.mu.lastSeen = map[int64]time.Time{}
	t.mu.timeout = map[int64]time.Duration{}
	t.mu.closing = map[int64]bool{}
	return t
}

// track starts tracking a session (on create, or on restore after restart).
func (t *sessionTracker) track(id int64, timeout time.Duration, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mu.lastSeen[id] = now
	t.mu.timeout[id] = timeout
}

// touch records activity of a session; it reports false if the session is
// not tracked or is being closed.
func (t *sessionTracker) touch(id int64, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.mu.lastSeen[id]; !ok || t.mu.closing[id] {
		return false
	}
	t.mu.lastSeen[id] = now
	return true
}

// setTimeout changes a session's timeout (a reconnect renegotiates it).
func (t *sessionTracker) setTimeout(id int64, timeout time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.mu.timeout[id]; ok {
		t.mu.timeout[id] = timeout
	}
}

// markClosing flags a session whose close is in flight; it reports false if
// it already was.
func (t *sessionTracker) markClosing(id int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.closing[id] {
		return false
	}
	t.mu.closing[id] = true
	return true
}

// unmarkClosing clears the closing flag of a session whose close was not
// proposed after all (expiry's proposal failed): a later expiry check
// decides again.
func (t *sessionTracker) unmarkClosing(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mu.closing, id)
}

// forget stops tracking a session (it was closed).
func (t *sessionTracker) forget(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.mu.lastSeen, id)
	delete(t.mu.timeout, id)
	delete(t.mu.closing, id)
}

// adopt tracks a session the tree holds but the tracker does not (one
// that came with a snapshot from the leader), from now; a tracked session
// only gets its renegotiated timeout.
func (t *sessionTracker) adopt(id int64, timeout time.Duration, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.mu.lastSeen[id]; !ok {
		t.mu.lastSeen[id] = now
	}
	t.mu.timeout[id] = timeout
}

// lease starts the tracker afresh for a server that has just become the
// one that decides expiry, as ZooKeeper's leader builds its SessionTracker
// from the data tree when it starts leading: every tracked session, and
// every session of the tree (id to timeout in ms) it did not track (one
// that came with a snapshot), gets a lease of its timeout from now (the
// new leader does not know when they were last heard from elsewhere, and
// the clients were busy reconnecting during the election), and none is
// closing. A timeout renegotiated since the session was created is kept.
// Nothing is dropped here: a session that closed after sessions was read
// may come back, and its expiry then proposes a close that applies as a
// no-op and forgets it.
func (t *sessionTracker) lease(sessions map[int64]int32, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range t.mu.lastSeen {
		t.mu.lastSeen[id] = now
	}
	for id, ms := range sessions {
		t.mu.lastSeen[id] = now
		if _, ok := t.mu.timeout[id]; !ok {
			t.mu.timeout[id] = time.Duration(ms) * time.Millisecond
		}
	}
	clear(t.mu.closing)
}

// expired returns the sessions silent for longer than their timeout and
// marks them closing.
func (t *sessionTracker) expired(now time.Time) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []int64
	for id, seen := range t.mu.lastSeen {
		if !t.mu.closing[id] && now.Sub(seen) > t.mu.timeout[id] {
			t.mu.closing[id] = true
			out = append(out, id)
		}
	}
	return out
}
