package quorum

import (
	"testing"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// TestNewLeaderLeasesSessionsAfresh: a server that becomes leader gives
// every session of its tree a lease of its timeout from the moment it took
// over, before its expiry loop expires anything, as ZooKeeper's leader
// builds its SessionTracker when it starts leading. A follower's clocks
// are stale (it is not told of activity on other servers), and during the
// election the clients were reconnecting: expiring on them would close
// live sessions. A session the tracker did not know (one that came with a
// snapshot) is leased too, and so expires in its turn, not never.
func TestNewLeaderLeasesSessionsAfresh(t *testing.T) {
	closes := map[int64]time.Time{} // when each session's close was proposed
	log := &instantLog{intercept: func(txn znode.Txn) verdict {
		if _, ok := closes[txn.Session]; !ok && txn.Ops[0].Type == zkproto.OpCloseSession {
			closes[txn.Session] = time.Now()
		}
		return applyNow
	}}
	closedAt := func(id int64) (time.Time, bool) {
		log.mu.Lock()
		defer log.mu.Unlock()
		at, ok := closes[id]
		return at, ok
	}
	s := newServerOver(t, 40*time.Millisecond, log) // the expiry loop looks every 10 ms
	const timeout = 500 * time.Millisecond
	stale, snapshotted := s.ids.nextID(), s.ids.nextID()
	for _, id := range []int64{stale, snapshotted} {
		txn := znode.Txn{Session: id, Ops: []znode.Op{{Type: zkproto.OpCreateSession, SessionTimeout: int32(timeout / time.Millisecond)}}}
		log.ProposeAsync(txn.Append(nil))
	}
	// As a follower knows them: one last heard of long ago, one not at all.
	s.tracker.track(stale, timeout, time.Now().Add(-time.Hour))
	s.tracker.forget(snapshotted)

	s.ens = &ensemble{}
	s.ens.role.Store(uint32(raftnode.RoleLeader))
	tookOver := time.Now()
	s.goTracked("zk-expiry", s.expireSessions)
	defer close(s.done)

	deadline := time.Now().Add(10 * time.Second)
	for _, id := range []int64{stale, snapshotted} {
		for {
			at, ok := closedAt(id)
			if ok {
				if lease := at.Sub(tookOver); lease < timeout {
					t.Fatalf("session 0x%x expired %v after the takeover, before its timeout of %v", id, lease, timeout)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("session 0x%x never expired (10s; timeout %v): the new leader does not track it", id, timeout)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
