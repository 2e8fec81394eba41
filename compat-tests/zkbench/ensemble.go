package main

// The -ensemble mode: a 3-voter zkafka ensemble beside a 3-voter Apache
// ZooKeeper 3.8 ensemble on this machine (one ensemble at a time, both
// fsyncing, both with tickTime -ensemble-ticktime), driven by the same
// load generator as the standalone run (client.go):
//
//   - create, setData and getData of -value bytes at -ensemble-sessions
//     sessions, session i connected to server i mod 3, each for -dur:
//     ops/s, p50/p99, the CPU of the three servers and of this client, and
//     the zkafka/ZooKeeper ratios against the targets (writes ≥1.5×, reads
//     ≥2×);
//   - -failover-rounds times: writers on the two followers, kill -9 of the
//     leader, and the time until a server reports Mode: leader and until
//     the first acknowledged write sent after the kill (writers resume
//     their sessions on another server when theirs drops, as clients do);
//     the killed server is restarted between rounds.

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
	"github.com/zkafka/zkafka/zkproto"
)

var (
	ensembleMode     = flag.Bool("ensemble", false, "benchmark 3-voter ensembles (zkafka and Apache ZooKeeper) instead of standalone servers")
	ensembleSessions = flag.Int("ensemble-sessions", 32, "-ensemble: concurrent sessions, spread over the servers")
	ensembleTickTime = flag.Duration("ensemble-ticktime", 2*time.Second, "-ensemble: tickTime of both ensembles")
	failoverRounds   = flag.Int("failover-rounds", 3, "-ensemble: leader kills per ensemble")
	failoverWriters  = flag.Int("failover-writers", 4, "-ensemble: writing sessions during a leader kill")
)

// member is one server of an ensemble under test.
type member struct {
	id   int
	addr string
	dir  string
	argv []string
	proc *benchkit.Proc
}

// benchEnsemble is one ensemble under test.
type benchEnsemble struct {
	name    string
	members []*member
}

// failover is one leader kill.
type failover struct {
	killed   int
	elected  time.Duration // until a survivor reported Mode: leader
	firstAck time.Duration // until the first acknowledged write sent after the kill
	err      error
}

type ensembleResult struct {
	name      string
	phases    map[string]*phase
	failovers []failover
	// leaderChanges counts the elections under load (no server killed):
	// how often the leader srvr names changed during the throughput cases.
	leaderChanges int
}

// ensembleMain runs the -ensemble mode and returns the exit code.
func ensembleMain() int {
	bin, err := filepath.Abs(*zkafkaBin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		return 1
	}
	root, err := os.MkdirTemp("", "zkbench-ensemble-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		return 1
	}
	benchkit.AtExit(func() { os.RemoveAll(root) })
	var results []*ensembleResult
	for _, name := range strings.Split(*serversArg, ",") {
		e, err := startBenchEnsemble(name, bin, filepath.Join(root, name))
		if err != nil {
			fmt.Fprintf(os.Stderr, "zkbench: %s ensemble: %v\n", name, err)
			return 1
		}
		benchkit.AtExit(e.stop)
		res, err := e.measure()
		if err != nil {
			fmt.Fprintf(os.Stderr, "zkbench: %s ensemble: %v\n%s", name, err, e.tails(15))
			e.stop()
			return 1
		}
		e.stop()
		results = append(results, res)
	}
	ensembleReport(results)
	return 0
}

// startBenchEnsemble writes the zoo.cfg and myid of three voters and
// starts them; it returns once every server reports a Mode.
func startBenchEnsemble(name, bin, root string) (*benchEnsemble, error) {
	e := &benchEnsemble{name: name}
	const n = 3
	type ports struct{ client, peer, elect int }
	ps := make([]ports, n)
	for i := range ps {
		for _, p := range []*int{&ps[i].client, &ps[i].peer, &ps[i].elect} {
			port, err := benchkit.FreePort()
			if err != nil {
				return nil, err
			}
			*p = port
		}
	}
	var servers strings.Builder
	for i, p := range ps {
		fmt.Fprintf(&servers, "server.%d=127.0.0.1:%d:%d:participant;127.0.0.1:%d\n", i+1, p.peer, p.elect, p.client)
	}
	for i, p := range ps {
		dir := filepath.Join(root, strconv.Itoa(i+1))
		data := filepath.Join(dir, "data")
		if err := os.MkdirAll(data, 0o755); err != nil {
			return nil, err
		}
		cfg := fmt.Sprintf("tickTime=%d\ninitLimit=10\nsyncLimit=5\ndataDir=%s\nclientPort=%d\n"+
			"clientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n"+
			"4lw.commands.whitelist=srvr,ruok\n%s", ensembleTickTime.Milliseconds(), data, p.client, servers.String())
		cfgPath := filepath.Join(dir, "zoo.cfg")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644); err != nil {
			return nil, err
		}
		m := &member{id: i + 1, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(p.client)), dir: dir}
		switch name {
		case "zkafka":
			m.argv = []string{bin, "zookeeper", "-log-level", "warn", cfgPath}
		case "zookeeper":
			argv, err := apacheArgv(dir, cfgPath, *heap)
			if err != nil {
				return nil, err
			}
			m.argv = argv
		default:
			return nil, fmt.Errorf("unknown server %q", name)
		}
		e.members = append(e.members, m)
	}
	for _, m := range e.members {
		if err := m.launch(e.name); err != nil {
			e.stop()
			return nil, err
		}
	}
	for _, m := range e.members {
		if err := m.proc.WaitReady(90*time.Second, func() error { return srvrReady(m.addr) }); err != nil {
			e.stop()
			return nil, err
		}
	}
	return e, nil
}

// apacheArgv is startApache's command line for an ensemble member.
func apacheArgv(dir, cfg, heap string) ([]string, error) {
	for _, p := range []string{apacheJar, slf4jLog4j, log4jJar} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("apache zookeeper is not installed (%s missing): apt-get install -y zookeeper", p)
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("no java on PATH: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "log4j.properties"), []byte(log4jProperties), 0o644); err != nil {
		return nil, err
	}
	argv := []string{java}
	if heap != "" {
		argv = append(argv, "-Xmx"+heap)
	}
	return append(argv,
		"-Dzookeeper.admin.enableServer=false",
		"-Dlog4j.configuration=file:"+filepath.Join(dir, "log4j.properties"),
		"-cp", strings.Join([]string{dir, apacheJar, slf4jLog4j, log4jJar}, ":"),
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg), nil
}

func (m *member) launch(name string) error {
	p, err := benchkit.Start(fmt.Sprintf("%s-%d", name, m.id), filepath.Join(m.dir, "server.log"), m.dir, m.argv...)
	if err != nil {
		return err
	}
	m.proc = p
	return nil
}

// kill sends SIGKILL to the member's process group and waits for it.
func (m *member) kill() {
	syscall.Kill(-m.proc.Pid(), syscall.SIGKILL)
	for {
		if done, _ := m.proc.Exited(); done {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (e *benchEnsemble) stop() {
	for _, m := range e.members {
		if m.proc != nil {
			m.proc.Stop(15 * time.Second)
		}
	}
}

func (e *benchEnsemble) addrs() []string {
	out := make([]string, len(e.members))
	for i, m := range e.members {
		out[i] = m.addr
	}
	return out
}

func (e *benchEnsemble) pids() []int {
	var out []int
	for _, m := range e.members {
		if done, _ := m.proc.Exited(); !done {
			out = append(out, m.proc.Pid())
		}
	}
	return out
}

func (e *benchEnsemble) tails(n int) string {
	var b strings.Builder
	for _, m := range e.members {
		fmt.Fprintf(&b, "--- %s server %d (%s):\n%s\n", e.name, m.id, m.proc.Log, m.proc.Tail(n))
	}
	return b.String()
}

// leader returns the member whose srvr says Mode: leader, or nil.
func (e *benchEnsemble) leader() *member {
	for _, m := range e.members {
		if srvrMode(m.addr) == "leader" {
			return m
		}
	}
	return nil
}

// watchLeader polls the leader every 100 ms and counts in *changes how
// often it changed (a poll that finds none counts as a change when a
// leader shows again), until the returned func is called.
func (e *benchEnsemble) watchLeader(changes *int) func() {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		last, gap := e.leader(), false
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			switch l := e.leader(); {
			case l == nil:
				gap = true
			case l != last || gap:
				*changes++
				last, gap = l, false
			}
		}
	}()
	return func() { close(stop); <-done }
}

// srvrMode is the "Mode:" of srvr, "" when the server does not answer it.
func srvrMode(addr string) string {
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return ""
	}
	b, _ := io.ReadAll(c)
	for _, l := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(l, "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}

func (e *benchEnsemble) measure() (*ensembleResult, error) {
	res := &ensembleResult{name: e.name, phases: map[string]*phase{}}
	c, err := dial(e.members[0].addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{"/zb", "/zfo"} {
		if code, err := c.do(zkproto.OpCreate, &zkproto.CreateRequest{Path: p, ACL: zkproto.OpenACLUnsafe}); err != nil || code != zkproto.ErrOK {
			c.close()
			return nil, fmt.Errorf("create %s: %v %v", p, code, err)
		}
	}
	c.close()
	value := make([]byte, *valueSize)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	n := *ensembleSessions
	if err := e.prepare(n, value); err != nil {
		return nil, err
	}
	if *warmup > 0 {
		for _, op := range []string{"create", "set", "get"} {
			if _, err := e.run("w", op, n, *warmup/3, value); err != nil {
				return nil, fmt.Errorf("warmup: %w", err)
			}
		}
	}
	stopWatch := e.watchLeader(&res.leaderChanges)
	for _, op := range []string{"create", "set", "get"} {
		p, err := e.run("m", op, n, *dur, value)
		if err != nil {
			stopWatch()
			return nil, fmt.Errorf("%s at %d sessions: %w", op, n, err)
		}
		fmt.Fprintf(os.Stderr, "zkbench: %s ensemble %-6s %2d sessions: %8.0f ops/s p50 %s p99 %s ms\n",
			e.name, op, n, p.rate(), benchkit.Ms(p.lat.Percentile(50)), benchkit.Ms(p.lat.Percentile(99)))
		res.phases[key(op, n)] = p
	}
	stopWatch()
	fmt.Fprintf(os.Stderr, "zkbench: %s ensemble: %d leader changes under load\n", e.name, res.leaderChanges)
	for round := range *failoverRounds {
		f := e.failover(round, value)
		res.failovers = append(res.failovers, f)
		if f.err != nil {
			fmt.Fprintf(os.Stderr, "zkbench: %s ensemble failover %d: %v\n", e.name, round+1, f.err)
			continue
		}
		fmt.Fprintf(os.Stderr, "zkbench: %s ensemble failover %d: leader %d killed, new leader after %s ms, first acknowledged write after %s ms\n",
			e.name, round+1, f.killed, benchkit.Ms(f.elected), benchkit.Ms(f.firstAck))
	}
	return res, nil
}

// prepare creates the 64 znodes per session that set and get cycle over
// (/zb/s<n>-<i>-<k>), with pipelined creates, so that these cases do not
// depend on how many nodes the create case made.
func (e *benchEnsemble) prepare(n int, value []byte) error {
	c, err := dial(e.members[0].addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.close()
	req := zkproto.CreateRequest{Data: value, ACL: zkproto.OpenACLUnsafe}
	var xid int32
	done, err := c.pipeline(n*64, 250, time.Now().Add(time.Minute), func(j int, dst []byte) []byte {
		req.Path = fmt.Sprintf("/zb/s%d-%d-%d", n, j/64, j%64)
		xid++
		return zkproto.AppendRequest(dst, zkproto.RequestHeader{Xid: xid, Type: zkproto.OpCreate}, &req)
	}, func(e zkproto.Err) bool { return e == zkproto.ErrNodeExists })
	c.xid = xid
	if err == nil && done < n*64 {
		err = fmt.Errorf("prepare: %d of %d znodes created", done, n*64)
	}
	return err
}

// run is zkbench's run (a closed-loop case: n sessions, each with one
// request outstanding, for d; create makes new nodes, set and get cycle
// over the ones prepare made) with session i connected to server i mod 3,
// and the CPU of every server of the ensemble.
func (e *benchEnsemble) run(tag, op string, n int, d time.Duration, value []byte) (*phase, error) {
	addrs := e.addrs()
	conns := make([]*client, n)
	for i := range conns {
		c, err := dial(addrs[i%len(addrs)], 10*time.Second)
		if err != nil {
			for _, c := range conns[:i] {
				c.close()
			}
			return nil, err
		}
		conns[i] = c
	}
	pids := e.pids()
	return closedLoop(conns, op, d, value,
		func(i int) string { return fmt.Sprintf("/zb/%s%d-%d-", tag, n, i) },
		func(i int) string { return fmt.Sprintf("/zb/s%d-%d-", n, i) }, // made by prepare
		func() time.Duration { return cpuOf(pids) })
}

func cpuOf(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		d, _ := benchkit.CPUTime(pid)
		sum += d
	}
	return sum
}

// failover kills the leader while writers on the followers write, and
// measures until a new leader and the first acknowledged write sent after
// the kill; then it restarts the killed server and waits until it serves.
func (e *benchEnsemble) failover(round int, value []byte) failover {
	var f failover
	var leader *member
	deadline := time.Now().Add(30 * time.Second)
	for leader = e.leader(); leader == nil; leader = e.leader() {
		if time.Now().After(deadline) {
			f.err = fmt.Errorf("no leader before the kill")
			return f
		}
		time.Sleep(50 * time.Millisecond)
	}
	f.killed = leader.id
	var survivors []string
	for _, m := range e.members {
		if m != leader {
			survivors = append(survivors, m.addr)
		}
	}
	stop := make(chan struct{})
	var mu sync.Mutex
	var acks [][2]time.Time // sent, acknowledged
	var wg sync.WaitGroup
	writerErr := make([]error, *failoverWriters)
	for w := range *failoverWriters {
		ww := &resumingWriter{addrs: survivors, next: w, path: fmt.Sprintf("/zfo/r%d-w%d", round, w)}
		if err := ww.start(value); err != nil {
			close(stop)
			wg.Wait()
			f.err = fmt.Errorf("writer %d: %w", w, err)
			return f
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ww.close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				sent, err := ww.write(value)
				if err != nil {
					writerErr[w] = err
					time.Sleep(5 * time.Millisecond)
					continue
				}
				mu.Lock()
				acks = append(acks, [2]time.Time{sent, time.Now()})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	killed := time.Now()
	leader.kill()
	var elected, firstAck time.Time
	deadline = killed.Add(30 * time.Second)
	for (elected.IsZero() || firstAck.IsZero()) && time.Now().Before(deadline) {
		if elected.IsZero() && e.leader() != nil {
			elected = time.Now()
		}
		if firstAck.IsZero() {
			mu.Lock()
			for _, a := range acks {
				if !a[0].Before(killed) && (firstAck.IsZero() || a[1].Before(firstAck)) {
					firstAck = a[1]
				}
			}
			mu.Unlock()
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if elected.IsZero() || firstAck.IsZero() {
		f.err = fmt.Errorf("no new leader or no acknowledged write within 30s of the kill (writers: %v)", writerErr)
	} else {
		f.elected, f.firstAck = elected.Sub(killed), firstAck.Sub(killed)
	}
	// Bring the killed server back as a follower before the next round.
	if err := leader.launch(e.name); err != nil {
		f.err = err
		return f
	}
	if err := leader.proc.WaitReady(90*time.Second, func() error { return srvrReady(leader.addr) }); err != nil && f.err == nil {
		f.err = err
	}
	time.Sleep(time.Second)
	return f
}

// resumingWriter is one session that writes one znode in a loop and, when
// its connection drops, resumes the session on the next server, as a
// client library does.
type resumingWriter struct {
	addrs  []string
	next   int
	path   string
	c      *client
	id     int64
	passwd []byte
}

func (w *resumingWriter) start(value []byte) error {
	c, resp, err := dialSession(w.addrs[w.next%len(w.addrs)], 0, nil, 3*time.Second)
	if err != nil {
		return err
	}
	w.c, w.id, w.passwd = c, resp.SessionID, resp.Passwd
	code, err := c.do(zkproto.OpCreate, &zkproto.CreateRequest{Path: w.path, Data: value, ACL: zkproto.OpenACLUnsafe})
	if err == nil && code != zkproto.ErrOK {
		err = fmt.Errorf("create %s: %v", w.path, code)
	}
	return err
}

// write sets the znode once and returns when the request was sent; on any
// failure the connection is dropped and the next call resumes the session
// elsewhere.
func (w *resumingWriter) write(value []byte) (time.Time, error) {
	if w.c == nil {
		w.next++
		c, _, err := dialSession(w.addrs[w.next%len(w.addrs)], w.id, w.passwd, time.Second)
		if err != nil {
			return time.Time{}, err
		}
		w.c = c
	}
	sent := time.Now()
	w.c.nc.SetDeadline(sent.Add(3 * time.Second))
	code, err := w.c.do(zkproto.OpSetData, &zkproto.SetDataRequest{Path: w.path, Data: value, Version: -1})
	if err == nil && code != zkproto.ErrOK {
		err = fmt.Errorf("set %s: %v", w.path, code)
	}
	if err != nil {
		w.c.nc.Close()
		w.c = nil
		return time.Time{}, err
	}
	return sent, nil
}

func (w *resumingWriter) close() {
	if w.c != nil {
		w.c.close()
	}
}

// dialSession is dial with a session to resume (id 0: a new one); it
// returns the server's answer.
func dialSession(addr string, id int64, passwd []byte, timeout time.Duration) (*client, zkproto.ConnectResponse, error) {
	var resp zkproto.ConnectResponse
	nc, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, resp, err
	}
	c := &client{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), bw: bufio.NewWriterSize(nc, 64<<10)}
	nc.SetDeadline(time.Now().Add(timeout))
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	req := zkproto.ConnectRequest{TimeOut: 30000, SessionID: id, Passwd: passwd, HasReadOnly: true}
	c.bw.Write(zkproto.AppendFrame(nil, &req))
	if err := c.bw.Flush(); err != nil {
		nc.Close()
		return nil, resp, err
	}
	body, err := zkproto.ReadFrame(c.br, nil, zkproto.MaxBuffer)
	if err != nil {
		nc.Close()
		return nil, resp, fmt.Errorf("handshake: %w", err)
	}
	r := zkproto.NewReader(body)
	resp.Decode(r)
	if r.Err() != nil || resp.TimeOut <= 0 {
		nc.Close()
		return nil, resp, fmt.Errorf("handshake refused (timeout %d, %v)", resp.TimeOut, r.Err())
	}
	nc.SetDeadline(time.Time{})
	return c, resp, nil
}

func ensembleReport(results []*ensembleResult) {
	n := *ensembleSessions
	fmt.Printf("ZooKeeper ensembles: 3 voters each on this machine, tickTime %v, fsync on; %d-byte values; %v per case;\n"+
		"%d sessions spread over the 3 servers; raw client on zkproto, one request outstanding per session\n\n",
		*ensembleTickTime, *valueSize, *dur, n)
	fmt.Printf("%-8s %4s  %-9s %10s %9s %9s %9s %9s\n", "op", "sess", "ensemble", "ops/s", "p50 ms", "p99 ms", "srv CPU", "cli CPU")
	for _, op := range []string{"create", "set", "get"} {
		for _, r := range results {
			p := r.phases[key(op, n)]
			fmt.Printf("%-8s %4d  %-9s %10.0f %9s %9s %8.0f%% %8.0f%%\n", op, n, r.name, p.rate(),
				benchkit.Ms(p.lat.Percentile(50)), benchkit.Ms(p.lat.Percentile(99)),
				100*p.srvCPU.Seconds()/p.elapsed.Seconds(), 100*p.cliCPU.Seconds()/p.elapsed.Seconds())
		}
	}
	var zk, ap *ensembleResult
	for _, r := range results {
		switch r.name {
		case "zkafka":
			zk = r
		case "zookeeper":
			ap = r
		}
	}
	if zk != nil && ap != nil {
		fmt.Printf("\nzkafka / ZooKeeper   %9s %-14s %9s\n", "ops/s", "(target)", "p99")
		for _, op := range []string{"create", "set", "get"} {
			a, b := zk.phases[key(op, n)], ap.phases[key(op, n)]
			target := 1.5
			if op == "get" {
				target = 2
			}
			tr, lr := a.rate()/b.rate(), float64(a.lat.Percentile(99))/float64(b.lat.Percentile(99))
			fmt.Printf("%-8s %4d sess    %9.2f %-14s %9.2f\n", op, n, tr, fmt.Sprintf("(≥%.1f) %s", target, met(tr >= target)), lr)
		}
	}
	fmt.Printf("\nleader kill -9 -> new leader / first acknowledged write (ms), %d writers on the followers\n", *failoverWriters)
	fmt.Printf("%-9s", "ensemble")
	for i := range *failoverRounds {
		fmt.Printf(" %15s", fmt.Sprintf("run %d", i+1))
	}
	fmt.Printf(" %15s\n", "median")
	medians := map[string]time.Duration{}
	for _, r := range results {
		fmt.Printf("%-9s", r.name)
		var acks, elected []time.Duration
		for _, f := range r.failovers {
			if f.err != nil {
				fmt.Printf(" %15s", "failed")
				continue
			}
			fmt.Printf(" %15s", benchkit.Ms(f.elected)+" / "+benchkit.Ms(f.firstAck))
			acks = append(acks, f.firstAck)
			elected = append(elected, f.elected)
		}
		if len(acks) > 0 {
			medians[r.name] = median(acks)
			fmt.Printf(" %15s", benchkit.Ms(median(elected))+" / "+benchkit.Ms(median(acks)))
		}
		fmt.Println()
	}
	if a, ok := medians["zkafka"]; ok {
		if b, ok := medians["zookeeper"]; ok {
			fmt.Printf("first acknowledged write, median zkafka / ZooKeeper: %.2f (target ≤0.5) %s\n",
				a.Seconds()/b.Seconds(), met(a.Seconds() <= 0.5*b.Seconds()))
		}
	}
	fmt.Printf("\nleader changes under load (no server killed; srvr polled every 100 ms during the throughput cases):")
	for _, r := range results {
		fmt.Printf(" %s %d", r.name, r.leaderChanges)
	}
	fmt.Println()
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
