package quorum

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/store/znode"
	"github.com/zkafka/zkafka/zkproto"
)

// closeRecorder is a replicator that applies every proposal at once and
// notes when each session close was proposed.
type closeRecorder struct {
	srv    *Server
	mu     sync.Mutex
	index  uint64
	closes map[int64]time.Time
}

func (r *closeRecorder) ProposeAsync(data []byte) <-chan proposeResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	if txn, err := znode.DecodeTxn(data); err == nil && len(txn.Ops) == 1 && txn.Ops[0].Type == zkproto.OpCloseSession {
		if _, ok := r.closes[txn.Session]; !ok {
			r.closes[txn.Session] = time.Now()
		}
	}
	r.index++
	out := make(chan proposeResult, 1)
	out <- proposeResult{applied: r.srv.apply(r.index, data).(*appliedTxn)}
	return out
}

func (r *closeRecorder) closedAt(id int64) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.closes[id]
	return at, ok
}

func (r *closeRecorder) ReadIndex(context.Context) error { return nil }

func (r *closeRecorder) Stop() error { return nil }

// TestNewLeaderLeasesSessionsAfresh: a server that becomes leader gives
// every session of its tree a lease of its timeout from the moment it took
// over, before its expiry loop expires anything, as ZooKeeper's leader
// builds its SessionTracker when it starts leading. A follower's clocks
// are stale (it is not told of activity on other servers), and during the
// election the clients were reconnecting: expiring on them would close
// live sessions. A session the tracker did not know (one that came with a
// snapshot) is leased too, and so expires in its turn, not never.
func TestNewLeaderLeasesSessionsAfresh(t *testing.T) {
	cfg := DefaultConfig(t.TempDir())
	cfg.TickTime = 40 * time.Millisecond // the expiry loop looks every 10 ms
	s := newServer(cfg, slog.New(slog.DiscardHandler), znode.New(znode.Options{MaxDataBytes: cfg.JuteMaxBuffer}))
	rec := &closeRecorder{srv: s, closes: map[int64]time.Time{}}
	s.repl = rec
	const timeout = 500 * time.Millisecond
	stale, snapshotted := s.ids.nextID(), s.ids.nextID()
	for _, id := range []int64{stale, snapshotted} {
		txn := znode.Txn{Session: id, Ops: []znode.Op{{Type: zkproto.OpCreateSession, SessionTimeout: int32(timeout / time.Millisecond)}}}
		rec.ProposeAsync(txn.Append(nil))
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
			at, ok := rec.closedAt(id)
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
