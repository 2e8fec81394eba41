package zkserver

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// EnsembleOptions configure an ensemble: Voters participants (myid 1..Voters)
// then Observers observers, all on 127.0.0.1 with free ports. Every server
// gets the zoo.cfg of Options plus initLimit, syncLimit, its server.N lines
// and a myid file in its dataDir.
type EnsembleOptions struct {
	Options
	Voters    int
	Observers int
	// PeerAddr, when set, gives the address that server `from` uses to
	// reach server `to`'s peer port (its server.`to` line); a test puts a
	// fault-injecting proxy there. It is called for every ordered pair
	// from != to with the real address of `to`; nil means the real address.
	// Election ports are never used by zkafka and are always real.
	PeerAddr func(from, to uint64, real string) string
	// DynamicConfigFile puts the server.N lines in a zoo.cfg.dynamic.VERSION
	// file beside zoo.cfg (VERSION in hex) that zoo.cfg names with
	// dynamicConfigFile, as ZooKeeper 3.5+ writes them; 0 keeps them in zoo.cfg.
	DynamicConfigFile uint64
	// InitialMembers, when not 0, gives servers 1..InitialMembers a
	// configuration of those servers only; the servers after them (joiners,
	// added by a reconfig) get every server's line, their own included.
	InitialMembers int
	// PerServer, when set, gives zoo.cfg lines of server id's own (such
	// as its key store), appended after those of Options.
	PerServer func(id uint64) []string
}

// Ensemble is a set of ZooKeeper server processes configured as one
// ensemble. Servers[i] has myid i+1.
type Ensemble struct {
	Servers []*Server
}

// NewApacheEnsemble prepares (does not start) an Apache ZooKeeper ensemble.
func NewApacheEnsemble(t testing.TB, opts EnsembleOptions) *Ensemble {
	t.Helper()
	e := newEnsemble(t, "apache", opts)
	for _, s := range e.Servers {
		s.argv = apacheArgv(t, s)
	}
	return e
}

// NewZkafkaEnsemble prepares (does not start) a zkafka ensemble.
func NewZkafkaEnsemble(t testing.TB, opts EnsembleOptions) *Ensemble {
	t.Helper()
	bin := ZkafkaBinary(t)
	e := newEnsemble(t, "zkafka", opts)
	for _, s := range e.Servers {
		s.argv = append([]string{bin, "zookeeper"}, opts.ExtraArgs...)
		s.argv = append(s.argv, filepath.Join(s.dir, "zoo.cfg"))
	}
	return e
}

func newEnsemble(t testing.TB, kind string, opts EnsembleOptions) *Ensemble {
	t.Helper()
	n := opts.Voters + opts.Observers
	if opts.Voters < 1 {
		t.Fatal("zkserver: an ensemble needs at least one voter")
	}
	e := &Ensemble{}
	elect := make([]int, n)
	for i := 0; i < n; i++ {
		s := newServer(t, kind, opts.Options)
		s.id = uint64(i + 1)
		var err error
		if s.peerPort, err = freePort(); err != nil {
			t.Fatal(err)
		}
		if elect[i], err = freePort(); err != nil {
			t.Fatal(err)
		}
		e.Servers = append(e.Servers, s)
	}
	for _, s := range e.Servers {
		var b, servers strings.Builder
		b.WriteString(s.zooCfg(clientPort(s.addr)))
		fmt.Fprintf(&b, "initLimit=10\nsyncLimit=5\n")
		if opts.PerServer != nil {
			for _, l := range opts.PerServer(s.id) {
				b.WriteString(l + "\n")
			}
		}
		for j, o := range e.Servers {
			if opts.InitialMembers > 0 && int(s.id) <= opts.InitialMembers && j >= opts.InitialMembers {
				break
			}
			peer := net.JoinHostPort("127.0.0.1", strconv.Itoa(o.peerPort))
			if opts.PeerAddr != nil && o.id != s.id {
				peer = opts.PeerAddr(s.id, o.id, peer)
			}
			role := "participant"
			if j >= opts.Voters {
				role = "observer"
			}
			fmt.Fprintf(&servers, "server.%d=%s:%d:%s;%s\n", o.id, peer, elect[j], role, o.addr)
		}
		if opts.DynamicConfigFile != 0 {
			dyn := filepath.Join(s.dir, "zoo.cfg.dynamic."+strconv.FormatUint(opts.DynamicConfigFile, 16))
			writeFile(t, dyn, servers.String())
			fmt.Fprintf(&b, "dynamicConfigFile=%s\n", dyn)
		} else {
			b.WriteString(servers.String())
		}
		writeFile(t, filepath.Join(s.dir, "zoo.cfg"), b.String())
		writeFile(t, filepath.Join(s.dir, "data", "myid"), fmt.Sprintf("%d\n", s.id))
	}
	return e
}

func clientPort(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// StartAll launches every server, then waits until each is ready (serving:
// srvr reports a Mode).
func (e *Ensemble) StartAll() {
	for _, s := range e.Servers {
		s.t.Helper()
		s.Launch()
	}
	for _, s := range e.Servers {
		s.WaitReady()
	}
}

// Addrs returns the client addresses of the servers.
func (e *Ensemble) Addrs() []string {
	out := make([]string, len(e.Servers))
	for i, s := range e.Servers {
		out[i] = s.addr
	}
	return out
}

// ConnectString is the servers' client addresses joined by commas.
func (e *Ensemble) ConnectString() string { return strings.Join(e.Addrs(), ",") }

// Leader returns the server whose srvr says "Mode: leader" (nil if none
// answers so).
func (e *Ensemble) Leader() *Server {
	for _, s := range e.Servers {
		if s.Running() && s.Mode() == "leader" {
			return s
		}
	}
	return nil
}

// WaitLeader polls until a running server reports Mode: leader and has
// for settleFor, at most timeout; on timeout it returns the leader seen
// last (nil if none).
func (e *Ensemble) WaitLeader(timeout time.Duration) *Server {
	deadline := time.Now().Add(timeout)
	var last *Server
	var since time.Time
	for {
		l := e.Leader()
		switch {
		case l == nil:
			last = nil
		case l != last:
			last, since = l, time.Now()
		case time.Since(since) >= settleFor:
			return l
		}
		if time.Now().After(deadline) {
			return last // nil, or a leader not yet settled
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settleFor is how long WaitLeader's leader must stay leader: right after
// an election zkafka's leader hands over to a higher myid within
// milliseconds (as ZooKeeper's election ends with the highest id), and a
// write sent to the first leader seen would lose its connection.
const settleFor = 300 * time.Millisecond

// ID is the server's myid (0 for a standalone server).
func (s *Server) ID() uint64 { return s.id }

// PeerAddr is the address the server listens on for its peers.
func (s *Server) PeerAddr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.peerPort))
}

// Launch starts the process without waiting for readiness.
func (s *Server) Launch() {
	s.t.Helper()
	s.launch()
}

// WaitReady waits until the server serves (srvr reports a Mode), at most
// Options.StartTimeout; it fails the test otherwise.
func (s *Server) WaitReady() {
	s.t.Helper()
	if err := s.waitReady(s.opts.startTimeout()); err != nil {
		s.t.Fatalf("zkserver: %s server %d on %s not ready: %v\nlog tail (%s):\n%s", s.kind, s.id, s.addr, err, s.logPath, s.LogTail(40))
	}
}

// Mode is the server's "Mode:" from srvr ("leader", "follower", "observer",
// "standalone"), or "" when it does not serve.
func (s *Server) Mode() string {
	out, err := FourLetterWord(s.addr, "srvr", 500*time.Millisecond)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(l, "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}

// Signal sends sig to the server's process group (SIGSTOP, SIGCONT, ...).
func (s *Server) Signal(sig syscall.Signal) {
	if s.Running() {
		_ = syscall.Kill(-s.cmd.Process.Pid, sig)
	}
}

// apacheArgv is the java command line of StartApache.
func apacheArgv(t testing.TB, s *Server) []string {
	t.Helper()
	for _, p := range []string{ApacheJar, slf4jLog4j, log4jJar} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("zkserver: Apache ZooKeeper is not installed (%s missing): %s", p, installHint)
		}
	}
	writeFile(t, filepath.Join(s.dir, "log4j.properties"), log4jProperties)
	argv := []string{"java",
		"-Xms32m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dlog4j.configuration=file:" + filepath.Join(s.dir, "log4j.properties"),
	}
	if s.opts.ExtendedTypes {
		argv = append(argv, "-Dzookeeper.extendedTypesEnabled=true")
	}
	if s.opts.ContainerCheckInterval > 0 {
		argv = append(argv, "-Dznode.container.checkIntervalMs="+strconv.FormatInt(s.opts.ContainerCheckInterval.Milliseconds(), 10))
	}
	argv = append(argv, s.opts.JVMFlags...)
	cp := append([]string{s.dir, ApacheJar, slf4jLog4j, log4jJar, servletAPI}, s.opts.ApacheClassPath...)
	return append(argv, "-cp", strings.Join(cp, ":"),
		apacheMain, filepath.Join(s.dir, "zoo.cfg"))
}
