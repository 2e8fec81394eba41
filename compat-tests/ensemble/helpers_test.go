package ensemble

import (
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// tickTime of the test ensembles: sessions may last 2..20 s.
const tickTime = time.Second

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// startEnsemble starts a zkafka ensemble of voters and observers and waits
// until every server serves.
func startEnsemble(t *testing.T, voters, observers int, peerAddr func(from, to uint64, real string) string) *zkserver.Ensemble {
	t.Helper()
	e := zkserver.NewZkafkaEnsemble(t, zkserver.EnsembleOptions{
		Options: zkserver.Options{TickTime: tickTime, StartTimeout: 20 * time.Second},
		Voters:  voters, Observers: observers, PeerAddr: peerAddr,
	})
	e.StartAll()
	return e
}

// dial opens a go-zookeeper session on addrs and waits (bounded) until it
// has a session.
func dial(t testing.TB, addrs []string, timeout time.Duration) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect(addrs, timeout, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.After(15 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				t.Cleanup(c.Close)
				return c
			}
		case <-deadline:
			c.Close()
			t.Fatalf("no session on %v within 15s", addrs)
		}
	}
}

// waitFor polls cond every 20 ms until it returns nil, at most timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// modes returns "id:mode" for every server, for messages.
func modes(e *zkserver.Ensemble) string {
	var b []string
	for _, s := range e.Servers {
		m := "down"
		if s.Running() {
			m = s.Mode()
			if m == "" {
				m = "not-serving"
			}
		}
		b = append(b, fmt.Sprintf("%d:%s", s.ID(), m))
	}
	return strings.Join(b, " ")
}

// agree checks that every running server has the same children and data
// under root after a sync, through a session on that server alone.
func agree(t *testing.T, e *zkserver.Ensemble, root string) map[string]string {
	t.Helper()
	var first map[string]string
	for _, s := range e.Servers {
		if !s.Running() {
			continue
		}
		c := dial(t, []string{s.Addr()}, 4*time.Second)
		if _, err := c.Sync(root); err != nil {
			t.Fatalf("server %d: sync: %v", s.ID(), err)
		}
		kids, _, err := c.Children(root)
		if err != nil {
			t.Fatalf("server %d: children of %s: %v", s.ID(), root, err)
		}
		got := map[string]string{}
		for _, k := range kids {
			d, st, err := c.Get(path.Join(root, k))
			if err != nil {
				t.Fatalf("server %d: get %s/%s: %v", s.ID(), root, k, err)
			}
			got[k] = fmt.Sprintf("%s@%d", d, st.Version)
		}
		c.Close()
		if first == nil {
			first = got
			continue
		}
		if len(got) != len(first) {
			t.Fatalf("server %d has %d nodes under %s, another server %d", s.ID(), len(got), root, len(first))
		}
		for k, v := range first {
			if got[k] != v {
				t.Fatalf("server %d: %s/%s = %q, another server has %q", s.ID(), root, k, got[k], v)
			}
		}
	}
	return first
}
