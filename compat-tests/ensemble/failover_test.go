package ensemble

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// writer creates /path/w<id>-<n> in a loop and records what was
// acknowledged, and when.
type writer struct {
	mu    sync.Mutex
	acked []string
	times [][2]time.Time // call, acknowledgement
}

func (w *writer) run(c *zk.Conn, id int, root string, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		p := fmt.Sprintf("%s/w%d-%06d", root, id, n)
		call := time.Now()
		_, err := c.Create(p, []byte("x"), 0, zk.WorldACL(zk.PermAll))
		if err == nil || errors.Is(err, zk.ErrNodeExists) {
			w.mu.Lock()
			if err == nil {
				w.acked = append(w.acked, p)
			}
			w.times = append(w.times, [2]time.Time{call, time.Now()})
			w.mu.Unlock()
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// firstAfter returns the first acknowledgement of a write made after t.
func (w *writer) firstAfter(t time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first time.Time
	for _, x := range w.times {
		if x[0].After(t) && (first.IsZero() || x[1].Before(first)) {
			first = x[1]
		}
	}
	return first, !first.IsZero()
}

// TestKillLeaderDuringWrites kills the leader with SIGKILL while four
// clients write: a new leader is elected within a few seconds, writes go
// on, and every acknowledged write is on every server afterwards (the
// killed one too, once restarted). Three more clients run get/set/cas
// meanwhile, and porcupine checks their history.
func TestKillLeaderDuringWrites(t *testing.T) {
	e := startEnsemble(t, 3, 0, nil)
	setup := dial(t, e.Addrs(), 4*time.Second)
	if _, err := setup.Create("/kill", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	old := e.WaitLeader(5 * time.Second)
	if old == nil {
		t.Fatalf("no leader: %s", modes(e))
	}
	w := &writer{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 4 {
		// Spread the clients: each starts at a different server.
		addrs := append([]string(nil), e.Addrs()[i%3:]...)
		addrs = append(addrs, e.Addrs()[:i%3]...)
		c := dial(t, addrs, 6*time.Second)
		wg.Add(1)
		go func() { defer wg.Done(); w.run(c, i, "/kill", stop) }()
	}
	lin := startLin(t, e, []string{"/klin0", "/klin1", "/klin2"}, 3)
	time.Sleep(time.Second)
	killed := time.Now()
	old.Kill()
	next := e.WaitLeader(10 * time.Second)
	elected := time.Since(killed)
	if next == nil {
		close(stop)
		wg.Wait()
		t.Fatalf("no new leader within 10s: %s", modes(e))
	}
	waitFor(t, 10*time.Second, "a write acknowledged after the kill", func() error {
		if _, ok := w.firstAfter(killed); !ok {
			return errors.New("none yet")
		}
		return nil
	})
	first, _ := w.firstAfter(killed)
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	lin.finish(t, "during leader kill -9")
	t.Logf("leader %d killed: server %d reports leader after %v; first acknowledged write after %v; %d writes acknowledged",
		old.ID(), next.ID(), elected.Round(time.Millisecond), first.Sub(killed).Round(time.Millisecond), len(w.acked))
	fmt.Printf("ensemble failover: leader kill -9 -> new leader %v, first acknowledged write %v\n",
		elected.Round(time.Millisecond), first.Sub(killed).Round(time.Millisecond))
	if first.Sub(killed) > 5*time.Second {
		t.Errorf("first write after the kill took %v", first.Sub(killed))
	}
	check := func() {
		nodes := agree(t, e, "/kill")
		for _, p := range w.acked {
			if _, ok := nodes[p[len("/kill/"):]]; !ok {
				t.Fatalf("acknowledged write %s is missing (modes %s)", p, modes(e))
			}
		}
	}
	check()
	old.Launch()
	old.WaitReady()
	check()
	if m := old.Mode(); m != "follower" {
		t.Errorf("restarted old leader is %q, want follower", m)
	}
}

// TestPauseLeader stops the leader with SIGSTOP for longer than the
// session timeout, writes meanwhile through the others, then resumes it:
// it rejoins as a follower and serves the new data, not the old. Three
// clients run get/set/cas throughout, and porcupine checks their history.
func TestPauseLeader(t *testing.T) {
	e := startEnsemble(t, 3, 0, nil)
	c := dial(t, e.Addrs(), 4*time.Second)
	if _, err := c.Create("/pause", []byte("before"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	lin := startLin(t, e, []string{"/plin0", "/plin1", "/plin2"}, 3)
	old := e.WaitLeader(5 * time.Second)
	if old == nil {
		t.Fatalf("no leader: %s", modes(e))
	}
	var others []string
	for _, s := range e.Servers {
		if s != old {
			others = append(others, s.Addr())
		}
	}
	// A session on the paused leader alone: it must expire (only a leader
	// expires sessions, and the new one hears nothing from it).
	lone := dial(t, []string{old.Addr()}, 2*time.Second)
	if _, err := lone.Create("/lone", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	old.Signal(syscall.SIGSTOP)
	paused := time.Now()
	c2 := dial(t, others, 4*time.Second)
	waitFor(t, 10*time.Second, "a write without the paused leader", func() error {
		_, err := c2.Set("/pause", []byte("during"), -1)
		return err
	})
	t.Logf("write acknowledged %v after SIGSTOP of leader %d", time.Since(paused).Round(time.Millisecond), old.ID())
	waitFor(t, 10*time.Second, "the paused leader's session expires", func() error {
		if ok, _, err := c2.Exists("/lone"); err != nil || ok {
			return fmt.Errorf("exists=%v err=%v", ok, err)
		}
		return nil
	})
	if d := time.Since(paused); d < 3*time.Second {
		time.Sleep(3*time.Second - d)
	}
	old.Signal(syscall.SIGCONT)
	waitFor(t, 10*time.Second, "the old leader rejoins as follower", func() error {
		if m := old.Mode(); m != "follower" {
			return fmt.Errorf("modes %s", modes(e))
		}
		return nil
	})
	// Whatever it serves now is the new data, without a sync.
	c3 := dial(t, []string{old.Addr()}, 4*time.Second)
	if d, _, err := c3.Get("/pause"); err != nil || string(d) != "during" {
		t.Fatalf("old leader serves %q, %v; want \"during\"", d, err)
	}
	if ok, _, _ := c3.Exists("/lone"); ok {
		t.Fatal("old leader still has the expired session's ephemeral")
	}
	time.Sleep(time.Second) // the clients go on with the old leader back
	lin.finish(t, "during leader SIGSTOP and SIGCONT")
	agree(t, e, "/")
}
