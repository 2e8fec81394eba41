package quorum

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/quorum/raftnode"
	"github.com/zkafka/zkafka/zkproto"
)

// reconfigEnsemble starts servers 1..n of specs (the first `voters` of
// which are in the initial configuration every server is given, plus, for
// a server past them, itself: a joiner), with reconfigEnabled and a super
// user "super:secret".
type reconfigEnsemble struct {
	t       *testing.T
	root    string
	specs   []ServerSpec
	servers map[uint64]*Server
}

func newReconfigEnsemble(t *testing.T, n int) *reconfigEnsemble {
	e := &reconfigEnsemble{t: t, root: t.TempDir(), servers: map[uint64]*Server{}}
	for i := range n {
		e.specs = append(e.specs, ServerSpec{ID: uint64(i + 1), Host: "127.0.0.1", PeerPort: inprocFreePort(t),
			ElectPort: inprocFreePort(t), ClientHost: "127.0.0.1", ClientPort: inprocFreePort(t)})
	}
	return e
}

func (e *reconfigEnsemble) start(id uint64, initial []ServerSpec) *Server {
	e.t.Helper()
	cfg := DefaultConfig(filepath.Join(e.root, fmt.Sprint(id)))
	cfg.TickTime = 200 * time.Millisecond
	cfg.MyID = id
	cfg.ReconfigEnabled = true
	cfg.SuperDigest = digestID("super:secret")
	cfg.Servers = initial
	sp := e.specs[id-1]
	cfg.ClientPort, cfg.ClientPortAddress = sp.ClientPort, sp.ClientHost
	l, err := net.Listen("tcp", net.JoinHostPort(sp.ClientHost, fmt.Sprint(sp.ClientPort)))
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := start(cfg, slog.New(slog.DiscardHandler), l, startOptions{})
	if err != nil {
		l.Close()
		e.t.Fatalf("server %d: %v", id, err)
	}
	e.t.Cleanup(func() { s.Close() })
	e.servers[id] = s
	return s
}

func (e *reconfigEnsemble) client(id uint64, super bool) *zk.Conn {
	e.t.Helper()
	c, _ := failstopClient(e.t, e.servers[id].Addr().String())
	if super {
		if err := c.AddAuth("digest", []byte("super:secret")); err != nil {
			e.t.Fatal(err)
		}
	}
	return c
}

func (e *reconfigEnsemble) line(id uint64, role string) string {
	sp := e.specs[id-1]
	return fmt.Sprintf("server.%d=127.0.0.1:%d:%d:%s;127.0.0.1:%d", id, sp.PeerPort, sp.ElectPort, role, sp.ClientPort)
}

// configOn waits until server id's /zookeeper/config lists exactly lines.
func (e *reconfigEnsemble) configOn(id uint64, lines ...string) {
	e.t.Helper()
	var got string
	failstopCheckFor(e.t, 30*time.Second, fmt.Sprintf("server %d's config %v", id, lines), func() bool {
		data, _, err := e.servers[id].tree.Load().Get("/zookeeper/config")
		if err != zkproto.ErrOK {
			return false
		}
		got = string(data)
		servers, _, _ := strings.Cut(got, "version=")
		return servers == strings.Join(lines, "\n")+"\n"
	})
}

// TestReconfigGrowShrinkObserver: zkCli's reconfig through go-zookeeper on
// a running ensemble: a fourth server joins (-add), serves writes, leaves
// (-remove); a voter becomes an observer and a voter again; the refusals
// (no admin rights, a stale -from, a quorum-less config) are ZooKeeper's.
func TestReconfigGrowShrinkObserver(t *testing.T) {
	e := newReconfigEnsemble(t, 4)
	three := e.specs[:3]
	for id := uint64(1); id <= 3; id++ {
		e.start(id, three)
	}
	e.start(4, e.specs) // the joiner knows the ensemble and itself
	admin := e.client(1, true)
	if _, err := admin.Create("/before", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	plain := e.client(2, false)
	if _, err := plain.IncrementalReconfig([]string{e.line(4, "participant")}, nil, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("reconfig without admin rights: %v, want NoAuth", err)
	}
	if _, err := admin.IncrementalReconfig(nil, []string{"3"}, 0x12345); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("reconfig from a stale version: %v, want BadVersion", err)
	}

	st, err := admin.IncrementalReconfig([]string{e.line(4, "participant")}, nil, -1)
	if err != nil {
		t.Fatalf("reconfig -add 4: %v", err)
	}
	four := []string{e.line(1, "participant"), e.line(2, "participant"), e.line(3, "participant"), e.line(4, "participant")}
	for id := uint64(1); id <= 4; id++ {
		e.configOn(id, four...)
	}
	data, _, _ := admin.Get("/zookeeper/config")
	if !strings.HasSuffix(string(data), fmt.Sprintf("version=%x", st.Mzxid)) {
		t.Fatalf("config %q: version is not the reconfig's zxid %#x", data, st.Mzxid)
	}
	c4 := e.client(4, false)
	if _, err := c4.Create("/via4", []byte("y"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("write through the new server: %v", err)
	}
	if _, err := admin.Sync("/via4"); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := admin.Exists("/via4"); !ok {
		t.Fatal("server 1 does not see the write made through server 4")
	}

	if _, err := admin.IncrementalReconfig([]string{e.line(3, "observer")}, nil, -1); err != nil {
		t.Fatalf("reconfig voter 3 -> observer: %v", err)
	}
	e.configOn(1, e.line(1, "participant"), e.line(2, "participant"), e.line(3, "observer"), e.line(4, "participant"))
	failstopCheckFor(t, 30*time.Second, "server 3 an observer", func() bool { return e.servers[3].ens.role.Load() == uint32(raftnode.RoleLearner) })

	if _, err := admin.IncrementalReconfig([]string{e.line(3, "participant")}, []string{"4"}, -1); err != nil {
		t.Fatalf("reconfig -add 3 participant -remove 4: %v", err)
	}
	for id := uint64(1); id <= 3; id++ {
		e.configOn(id, e.line(1, "participant"), e.line(2, "participant"), e.line(3, "participant"))
	}
	if _, err := admin.Create("/after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// A restarted server keeps the reconfigured membership (replayed from
	// its log), not its zoo.cfg's, which still lists only 1..3 here.
	e.servers[2].Close()
	e.start(2, three)
	e.configOn(2, e.line(1, "participant"), e.line(2, "participant"), e.line(3, "participant"))
	want, _, _ := e.servers[1].tree.Load().Get("/zookeeper/config")
	if got, _, _ := e.servers[2].tree.Load().Get("/zookeeper/config"); string(got) != string(want) {
		t.Fatalf("restarted server's config %q, want %q", got, want)
	}
	c2 := e.client(2, false)
	if _, err := c2.Create("/restarted", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("write through the restarted server: %v", err)
	}
}
