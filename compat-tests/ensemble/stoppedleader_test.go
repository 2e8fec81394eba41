package ensemble

import (
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestResumedLeaderExpiresNoSession: a session lives through a leader
// stopped (SIGSTOP) for longer than its timeout, with its client on the
// leader (it moves once its connection times out) and then on a follower
// throughout. Two ways to lose it, both checked here:
//
//   - the follower closes its clients during raft's own election (a grace
//     shorter than the election), go-zookeeper moves to the next server,
//     the stopped leader, whose kernel accepts, and waits ten receive
//     timeouts there for an answer while the new leader expires the
//     session (seen on main: round 1, 1 run in 5 on a loaded machine);
//   - the resumed leader believes it still leads, with an expiry clock
//     that did not hear the client renew elsewhere: its close must not
//     reach the log (ZooKeeper's deposed leader gets no acks in the new
//     epoch).
//
// The session must keep its id, get no StateExpired, and keep its
// ephemeral on every server, during and after several expiry checks of
// the resumed server.
func TestResumedLeaderExpiresNoSession(t *testing.T) {
	const tick = 500 * time.Millisecond
	sessionTimeout := 8 * tick
	e := zkserver.NewZkafkaEnsemble(t, zkserver.EnsembleOptions{
		Options: zkserver.Options{TickTime: tick, StartTimeout: 30 * time.Second},
		Voters:  3,
	})
	e.StartAll()
	for round := range 2 {
		leader := e.WaitLeader(20 * time.Second)
		if leader == nil {
			t.Fatalf("round %d: no leader: %s", round, modes(e))
		}
		// Round 0: the client starts on the leader, and moves to a
		// follower once its connection to the stopped leader times out
		// (the stopped leader last heard it before it stopped). Round 1:
		// it is on a follower throughout.
		first := leader
		if round == 1 {
			for _, s := range e.Servers {
				if s != leader {
					first = s
					break
				}
			}
		}
		var (
			c       *zk.Conn
			mu      sync.Mutex
			expired int
		)
		// Connect until the session is on first (bounded): a handshake
		// that meets an election moves the client to the next server.
		for try := 0; ; try++ {
			conn, events, err := zk.Connect(e.Addrs(), sessionTimeout, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false),
				zk.WithHostProvider(&firstHosts{first: first.Addr()}))
			if err != nil {
				t.Fatal(err)
			}
			has := make(chan struct{})
			go func() {
				var once sync.Once
				for ev := range events {
					if ev.State == zk.StateExpired {
						mu.Lock()
						expired++
						mu.Unlock()
					}
					if ev.State == zk.StateHasSession {
						once.Do(func() { close(has) })
					}
				}
			}()
			select {
			case <-has:
			case <-time.After(15 * time.Second):
				t.Fatalf("round %d: no session", round)
			}
			if conn.Server() == first.Addr() {
				c = conn
				break
			}
			conn.Close()
			if try == 5 {
				t.Fatalf("round %d: the client never got its session on %s", round, first.Addr())
			}
			time.Sleep(100 * time.Millisecond)
		}
		eph := fmt.Sprintf("/resumed%d", round)
		if _, err := c.Create(eph, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		sid := c.SessionID()
		leader.Signal(syscall.SIGSTOP)
		stopped := time.Now()
		// A new leader, and the session renewed with it for longer than
		// the session's timeout while the old one sleeps.
		var others []string
		for _, s := range e.Servers {
			if s != leader {
				others = append(others, s.Addr())
			}
		}
		writer := dialOne(t, others, 4*time.Second)
		waitFor(t, 30*time.Second, fmt.Sprintf("round %d: a write after the leader stopped", round), func() error {
			_, err := writer.Set("/", nil, -1)
			return err
		})
		for time.Since(stopped) < sessionTimeout+2*time.Second {
			if _, _, err := c.Exists("/"); err != nil {
				t.Logf("round %d: exists on the follower: %v", round, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		leader.Signal(syscall.SIGCONT)
		leader.WaitReady()
		// The resumed server's expiry checks run every tickTime/4; give
		// them several rounds, and the new leader time to apply a close.
		waitFor(t, 20*time.Second, fmt.Sprintf("round %d: the resumed server %d follows", round, leader.ID()), func() error {
			if m := leader.Mode(); m != "follower" && m != "leader" {
				return fmt.Errorf("mode %q", m)
			}
			return nil
		})
		time.Sleep(4 * tick)
		mu.Lock()
		n := expired
		mu.Unlock()
		if n > 0 || c.SessionID() != sid {
			t.Fatalf("round %d: the session expired after the stopped leader %d resumed (%d StateExpired, session 0x%x, want 0x%x)", round, leader.ID(), n, c.SessionID(), sid)
		}
		for _, s := range e.Servers {
			cs := dialOne(t, []string{s.Addr()}, 4*time.Second)
			if _, err := cs.Sync("/"); err != nil {
				t.Fatalf("round %d: sync on server %d: %v", round, s.ID(), err)
			}
			ok, st, err := cs.Exists(eph)
			cs.Close()
			if err != nil || !ok || st.EphemeralOwner != sid {
				t.Fatalf("round %d: server %d: the ephemeral exists=%v owner=0x%x err=%v, want owner 0x%x (the resumed leader %d closed the session)", round, s.ID(), ok, ownerOf(st), err, sid, leader.ID())
			}
		}
		writer.Close()
		c.Close()
		t.Logf("round %d: leader %d stopped for %v, session 0x%x kept", round, leader.ID(), (sessionTimeout + 2*time.Second).Round(time.Millisecond), sid)
	}
}

// firstHosts is steeredHosts offering first before the others (which
// go-zookeeper's Connect has shuffled).
type firstHosts struct {
	steeredHosts
	first string
}

func (h *firstHosts) Init(servers []string) error {
	ordered := []string{h.first}
	for _, s := range servers {
		if s != h.first {
			ordered = append(ordered, s)
		}
	}
	return h.steeredHosts.Init(ordered)
}
