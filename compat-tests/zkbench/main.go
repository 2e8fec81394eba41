// Command zkbench drives zkafka's standalone ZooKeeper server (`zkafka
// zookeeper zoo.cfg`, a real process that fsyncs every raft Ready) and
// Apache ZooKeeper 3.8 standalone (Debian's package, forceSync=yes) with the
// same load generator in one run, and prints a table:
//
//   - create, setData and getData of 100-byte values at 1 and 32 concurrent
//     sessions (each session one request at a time), each for -dur, -rounds
//     times, both servers running and taking turns case by case (this
//     machine's load changes from minute to minute): ops/s, p50/p99
//     latency, the CPU the server and this client used, the load average,
//     and the zkafka/ZooKeeper ratios of each round (best and median)
//     against the targets (≥2× ops/s, ≤0.5× p99);
//   - the resident memory (VmRSS, /proc) of a fresh server after each count
//     of -fill (100k and 1M) znodes of 100 bytes created with pipelined
//     async creates, bounded by -fill-max (the table says how many were
//     created when it stops early).
//
// The load generator is a raw client on zkproto (client.go); its own CPU
// is printed beside the server's so a client-bound result shows.
//
//	go run ./compat-tests/zkbench -zkafka bin/zkafka
//
// With -ensemble it runs 3-voter ensembles instead (ensemble.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
	"github.com/zkafka/zkafka/zkproto"
)

var (
	zkafkaBin  = flag.String("zkafka", "bin/zkafka", "zkafka binary")
	serversArg = flag.String("servers", "zkafka,zookeeper", "servers to run, in order")
	dur        = flag.Duration("dur", 5*time.Second, "duration of each throughput case")
	warmup     = flag.Duration("warmup", 3*time.Second, "unmeasured load before the first case (JIT)")
	rounds     = flag.Int("rounds", 3, "times each case runs on each server, the servers taking turns")
	baseBin    = flag.String("base", "", "another zkafka binary, the server zkbase in -servers (zkafka against an earlier build)")
	sessArg    = flag.String("sessions", "1,32", "concurrent sessions per case")
	opsArg     = flag.String("ops", "create,set,get", "the cases to measure, of create, set and get (set and get find the znodes of an unmeasured create all the same)")
	valueSize  = flag.Int("value", 100, "bytes per znode value")
	fillArg    = flag.String("fill", "100000,1000000", "znode counts after which resident memory is read, on a fresh server (empty or 0 = skip)")
	fillMax    = flag.Duration("fill-max", 2*time.Minute, "time limit of the fill per server")
	fillConns  = flag.Int("fill-conns", 4, "sessions of the fill")
	fillWindow = flag.Int("fill-window", 250, "outstanding creates per fill session")
	heap       = flag.String("apache-heap", "1000m", "Apache ZooKeeper -Xmx (upstream zkEnv.sh's 1000 MB; empty = JVM default)")
	profile    = flag.String("cpuprofile", "", "run zkafka in-process under runtime/pprof and write its CPU profile here")
	memProfile = flag.String("memprofile", "", "run zkafka in-process and write its heap profile (after a GC) here when it stops")
	traceOut   = flag.String("trace", "", "run zkafka in-process under the execution tracer's flight recorder and write its last -trace-window here when it stops (go tool trace)")
	traceStage = flag.Bool("trace-stages", false, "-trace: print the time each stage of a write takes (p50, p90), read from the trace; for a run whose last case is writes of one session (-sessions 1 -ops create)")
	traceWin   = flag.Duration("trace-window", 2*time.Second, "-trace: how much of the end of the run the trace keeps (the last case run)")
	serveZKCfg = flag.String("serve-zk", "", "internal: serve zkafka ZooKeeper in this process from this zoo.cfg")
)

// phase is one measured case on one server.
type phase struct {
	op       string
	sessions int
	ops      int
	elapsed  time.Duration
	lat      benchkit.Latencies
	srvCPU   time.Duration
	cliCPU   time.Duration
	errs     int
	load     string // the one-minute load average when the case ended
}

func (p *phase) rate() float64 { return float64(p.ops) / p.elapsed.Seconds() }

// memResult is one memory measurement of one server: after want znodes.
type memResult struct {
	want     int
	created  int
	elapsed  time.Duration
	before   benchkit.Memory
	after    benchkit.Memory
	complete bool
	err      error
}

type serverResult struct {
	name   string
	phases map[string][]*phase // one per round
	mem    []*memResult        // one per -fill count
}

func key(op string, sessions int) string { return op + "/" + strconv.Itoa(sessions) }

func main() {
	flag.Parse()
	if *serveZKCfg != "" {
		os.Exit(serveZK(*serveZKCfg, *profile, *memProfile, *traceOut))
	}
	if *ensembleMode {
		benchkit.Exit(ensembleMain()) // ensemble.go
	}
	var sessions []int
	for _, s := range strings.Split(*sessArg, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fatal(fmt.Errorf("bad -sessions %q", *sessArg))
		}
		sessions = append(sessions, n)
	}
	var fills []int
	for _, f := range strings.Split(*fillArg, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil && strings.TrimSpace(f) != "" || n < 0 || len(fills) > 0 && n <= fills[len(fills)-1] {
			fatal(fmt.Errorf("bad -fill %q (increasing counts)", *fillArg))
		}
		if n > 0 {
			fills = append(fills, n)
		}
	}
	bin, err := filepath.Abs(*zkafkaBin)
	if err != nil {
		fatal(err)
	}
	root, err := os.MkdirTemp("", "zkbench-")
	if err != nil {
		fatal(err)
	}
	benchkit.AtExit(func() { os.RemoveAll(root) })

	// Every server runs at once and the servers take turns case by case,
	// round by round (in a turning order), so that a change in this shared
	// machine's load between two cases weighs on both sides of a ratio
	// alike.
	names := strings.Split(*serversArg, ",")
	var servers []*server
	var results []*serverResult
	for _, name := range names {
		s, err := startNamed(name, bin, filepath.Join(root, name), *profile, *memProfile)
		if err != nil {
			fatal(err)
		}
		benchkit.AtExit(s.stop)
		if err := prepare(s); err != nil {
			failed(s, err)
		}
		servers = append(servers, s)
		results = append(results, &serverResult{name: s.name, phases: map[string][]*phase{}})
	}
	for r := range *rounds {
		for _, n := range sessions {
			for _, op := range []string{"create", "set", "get"} {
				if !measured(op) {
					if op == "create" {
						for _, s := range servers {
							if err := topUp(s, n, casePrefix("m"+strconv.Itoa(r), n), value()); err != nil {
								failed(s, fmt.Errorf("creating the znodes of %d sessions: %w", n, err))
							}
						}
					}
					continue
				}
				for k := range servers {
					// The order turns round by round, and the dirty pages
					// of the case before (a snapshot file) are written
					// out first, so that neither weighs on one server's
					// fsyncs only.
					i := (k + r) % len(servers)
					s := servers[i]
					syscall.Sync()
					p, err := run(s, "m"+strconv.Itoa(r), op, n, *dur, value())
					if err != nil {
						failed(s, fmt.Errorf("%s at %d sessions: %w", op, n, err))
					}
					fmt.Fprintf(os.Stderr, "zkbench: round %d %-9s %-6s %2d sessions: %8.0f ops/s p50 %s p99 %s ms (load %s)\n",
						r+1, s.name, op, n, p.rate(), benchkit.Ms(p.lat.Percentile(50)), benchkit.Ms(p.lat.Percentile(99)), loadAvg())
					results[i].phases[key(op, n)] = append(results[i].phases[key(op, n)], p)
				}
			}
		}
	}
	for _, s := range servers {
		s.stop()
	}
	if len(fills) > 0 {
		// Memory on fresh servers, so the throughput cases' znodes do not
		// count (it does not depend on the load: one after the other).
		for i, name := range names {
			s, err := startNamed(name, bin, filepath.Join(root, name+"-fill"), "", *memProfile)
			if err != nil {
				fatal(err)
			}
			benchkit.AtExit(s.stop)
			results[i].mem = fillMeasure(s, fills)
			s.stop()
		}
	}
	report(results, sessions, fills)
	if *profile != "" {
		fmt.Printf("\nzkafka CPU profile: %s (go tool pprof -top %s %s)\n", *profile, os.Args[0], *profile)
	}
	if *traceOut != "" {
		fmt.Printf("zkafka execution trace of the last %v: %s (go tool trace %s)\n", *traceWin, *traceOut, *traceOut)
		if *traceStage {
			if err := printWriteStages(*traceOut, os.Stdout); err != nil {
				fatal(err)
			}
		}
	}
	benchkit.Exit(0)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "zkbench:", err)
	benchkit.Exit(1)
}

func startNamed(name, bin, dir, profile, memProfile string) (*server, error) {
	os.MkdirAll(dir, 0o755)
	switch name {
	case "zkafka":
		return startZkafka(bin, dir, profile, memProfile)
	case "zookeeper":
		return startApache(dir, *heap)
	case "zkbase":
		base, err := filepath.Abs(*baseBin)
		if err != nil {
			return nil, err
		}
		s, err := startZkafka(base, dir, "", "")
		if s != nil {
			s.name = "zkbase"
		}
		return s, err
	}
	return nil, fmt.Errorf("unknown server %q", name)
}

func failed(s *server, err error) {
	fmt.Fprintf(os.Stderr, "zkbench: %s: %v\nlog tail:\n%s\n", s.name, err, s.proc.Tail(20))
	benchkit.Exit(1)
}

// value is the data of every znode the load generator writes.
func value() []byte {
	v := make([]byte, *valueSize)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	return v
}

// loadAvg is this machine's one-minute load average (/proc/loadavg).
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// prepare creates /zb and runs the warmup (JIT) on s.
func prepare(s *server) error {
	c, err := dial(s.addr, 10*time.Second)
	if err != nil {
		return err
	}
	if e, err := c.do(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/zb", ACL: zkproto.OpenACLUnsafe}); err != nil || e != zkproto.ErrOK {
		return fmt.Errorf("create /zb: %v %v", e, err)
	}
	c.close()
	if *warmup > 0 {
		for _, op := range []string{"create", "set", "get"} {
			if _, err := run(s, "w", op, 32, *warmup/3, value()); err != nil {
				return fmt.Errorf("warmup: %w", err)
			}
		}
	}
	return nil
}

// run is one closed-loop case: n sessions, each with one request
// outstanding, for d. Session i works on /zb/<tag><n>-<i>-<k>: create makes
// new nodes, set and get cycle over the first 64 its create case made.
func run(s *server, tag, op string, n int, d time.Duration, value []byte) (*phase, error) {
	conns := make([]*client, n)
	for i := range conns {
		c, err := dial(s.addr, 10*time.Second)
		if err != nil {
			return nil, err
		}
		conns[i] = c
	}
	prefix := casePrefix(tag, n)
	p, err := closedLoop(conns, op, d, value, prefix, prefix, func() time.Duration {
		t, _ := benchkit.CPUTime(s.proc.Pid())
		return t
	})
	if err == nil && op == "create" {
		err = topUp(s, n, prefix, value)
	}
	return p, err
}

// casePrefix is the path prefix of session i of the case of n sessions
// tagged tag.
func casePrefix(tag string, n int) func(i int) string {
	return func(i int) string { return fmt.Sprintf("/zb/%s%d-%d-", tag, n, i) }
}

// measured reports whether -ops names op.
func measured(op string) bool {
	for _, o := range strings.Split(*opsArg, ",") {
		if strings.TrimSpace(o) == op {
			return true
		}
	}
	return false
}

// topUp creates whichever of <prefix(i)>0 to <prefix(i)>63 a create case
// did not reach (a loaded machine, a short case), so that the set and get
// cases find all of them.
func topUp(s *server, n int, prefix func(int) string, value []byte) error {
	c, err := dial(s.addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer c.close()
	req := zkproto.CreateRequest{Data: value, ACL: zkproto.OpenACLUnsafe}
	var path []byte
	xid := c.xid
	_, err = c.pipeline(n*64, 250, time.Now().Add(time.Minute), func(i int, dst []byte) []byte {
		path = strconv.AppendInt(append(path[:0], prefix(i/64)...), int64(i%64), 10)
		req.Path = string(path)
		xid++
		return zkproto.AppendRequest(dst, zkproto.RequestHeader{Xid: xid, Type: zkproto.OpCreate}, &req)
	}, func(e zkproto.Err) bool { return e == zkproto.ErrNodeExists })
	c.xid = xid
	return err
}

// closedLoop runs op on every session of conns (and then closes them), each
// with one request outstanding, for d. Session i creates
// <created(i)><k> for k = 0, 1, ...; set and get cycle over
// <existing(i)>0 to <existing(i)>63. serverCPU reads the servers' CPU time
// before and after.
func closedLoop(conns []*client, op string, d time.Duration, value []byte, created, existing func(i int) string, serverCPU func() time.Duration) (*phase, error) {
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	n := len(conns)
	lats := make([]benchkit.Latencies, n)
	counts := make([]int, n)
	errs := make([]error, n)
	srv0 := serverCPU()
	cli0 := benchkit.SelfCPU()
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prefix, fixed := created(i), existing(i)
			var path []byte
			create := zkproto.CreateRequest{Data: value, ACL: zkproto.OpenACLUnsafe}
			set := zkproto.SetDataRequest{Data: value, Version: -1}
			var get zkproto.GetDataRequest
			for k := 0; ; k++ {
				now := time.Now()
				if now.After(end) {
					return
				}
				var rec zkproto.Record
				var code zkproto.OpCode
				path = strconv.AppendInt(append(path[:0], fixed...), int64(k%64), 10)
				switch op {
				case "create":
					path = strconv.AppendInt(append(path[:0], prefix...), int64(k), 10)
					create.Path, rec, code = string(path), &create, zkproto.OpCreate
				case "set":
					set.Path, rec, code = string(path), &set, zkproto.OpSetData
				case "get":
					get.Path, rec, code = string(path), &get, zkproto.OpGetData
				}
				e, err := c.do(code, rec)
				if err == nil && e != zkproto.ErrOK {
					err = fmt.Errorf("%s %s: %v", op, path, e)
				}
				if err != nil {
					errs[i] = err
					return
				}
				lats[i].Add(time.Since(now))
				counts[i]++
			}
		}()
	}
	wg.Wait()
	p := &phase{op: op, sessions: n, elapsed: time.Since(start), load: loadAvg()}
	p.srvCPU, p.cliCPU = serverCPU()-srv0, benchkit.SelfCPU()-cli0
	for i := range conns {
		if errs[i] != nil {
			return nil, errs[i]
		}
		p.ops += counts[i]
		p.lat.Merge(&lats[i])
	}
	return p, nil
}

// fillMeasure creates znodes of -value bytes under /zf with pipelined
// creates from -fill-conns sessions until there are fills[0], reads the
// server's resident memory, goes on to fills[1], and so on; the whole fill
// is bounded by -fill-max.
func fillMeasure(s *server, fills []int) []*memResult {
	value := value()
	c, err := dial(s.addr, 10*time.Second)
	if err == nil {
		_, err = c.do(zkproto.OpCreate, &zkproto.CreateRequest{Path: "/zf", ACL: zkproto.OpenACLUnsafe})
		c.close()
	}
	start := time.Now()
	deadline := start.Add(*fillMax)
	var out []*memResult
	done := 0 // znodes created by every session so far (each the same share)
	for _, want := range fills {
		m := &memResult{want: want, err: err}
		out = append(out, m)
		m.before, _ = benchkit.ReadMemory(s.proc.Pid())
		if err != nil {
			break
		}
		per := (want + *fillConns - 1) / *fillConns
		m.created = fillRange(s, value, done, per, deadline, m) + done*(*fillConns)
		done = per
		m.elapsed = time.Since(start)
		m.complete = m.created >= want
		time.Sleep(2 * time.Second) // let the server settle (snapshot, GC)
		m.after, _ = benchkit.ReadMemory(s.proc.Pid())
		fmt.Fprintf(os.Stderr, "zkbench: %-9s fill: %d znodes in %v, VmRSS %d MB (err %v)\n",
			s.name, m.created, m.elapsed.Round(time.Millisecond), m.after.RSS>>20, m.err)
		if !m.complete {
			break
		}
	}
	return out
}

// fillRange has each of -fill-conns sessions create its znodes from to
// to-1, and returns how many were created; the first error goes to m.err.
func fillRange(s *server, value []byte, from, to int, deadline time.Time, m *memResult) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for ci := range *fillConns {
		c, err := dial(s.addr, 10*time.Second)
		if err != nil {
			m.err = err
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.close()
			prefix := fmt.Sprintf("/zf/%d-", ci)
			req := zkproto.CreateRequest{Data: value, ACL: zkproto.OpenACLUnsafe}
			var xid int32
			var path []byte
			done, err := c.pipeline(to-from, *fillWindow, deadline, func(i int, dst []byte) []byte {
				path = strconv.AppendInt(append(path[:0], prefix...), int64(from+i), 10)
				req.Path = string(path)
				xid++
				return zkproto.AppendRequest(dst, zkproto.RequestHeader{Xid: xid, Type: zkproto.OpCreate}, &req)
			}, func(e zkproto.Err) bool { return e == zkproto.ErrNodeExists })
			c.xid = xid
			mu.Lock()
			created += done
			if err != nil && m.err == nil {
				m.err = err
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return created
}

func report(results []*serverResult, sessions []int, fills []int) {
	fmt.Printf("ZooKeeper standalone, fsync on; %d-byte values; %v per case, %d rounds, the servers taking turns; raw pipelined client on zkproto\n\n", *valueSize, *dur, *rounds)
	fmt.Printf("the round of median ops/s of each:\n%-8s %4s  %-9s %10s %9s %9s %9s %9s %6s\n", "op", "sess", "server", "ops/s", "p50 ms", "p99 ms", "srv CPU", "cli CPU", "load")
	for _, n := range sessions {
		for _, op := range []string{"create", "set", "get"} {
			if !measured(op) {
				continue
			}
			for _, r := range results {
				ps := r.phases[key(op, n)]
				p := ps[medianIndex(ps, func(p *phase) float64 { return p.rate() })]
				fmt.Printf("%-8s %4d  %-9s %10.0f %9s %9s %8.0f%% %8.0f%% %6s\n", op, n, short(r.name), p.rate(),
					benchkit.Ms(p.lat.Percentile(50)), benchkit.Ms(p.lat.Percentile(99)),
					100*p.srvCPU.Seconds()/p.elapsed.Seconds(), 100*p.cliCPU.Seconds()/p.elapsed.Seconds(), p.load)
			}
		}
	}
	zk, zkOK := find(results, "zkafka")
	ap, apOK := find(results, "zookeeper")
	if base, ok := find(results, "zkbase"); zkOK && ok {
		ratios("zkafka / zkbase", zk, base, sessions)
	}
	if zkOK && apOK {
		ratios("zkafka / ZooKeeper", zk, ap, sessions)
	}

	if len(fills) > 0 {
		fmt.Printf("\n%-9s %10s %9s %11s %12s %12s %12s\n", "server", "znodes", "fill s", "creates/s", "RSS start MB", "VmRSS MB", "VmHWM MB")
		for _, r := range results {
			for _, m := range r.mem {
				note := ""
				if !m.complete {
					note = fmt.Sprintf("  (stopped at %d of %d: %v)", m.created, m.want, m.err)
					if m.err == nil {
						note = fmt.Sprintf("  (stopped at %d of %d by -fill-max)", m.created, m.want)
					}
				}
				fmt.Printf("%-9s %10d %9.1f %11.0f %12d %12d %12d%s\n", short(r.name), m.created, m.elapsed.Seconds(),
					float64(m.created)/m.elapsed.Seconds(), m.before.RSS>>20, m.after.RSS>>20, m.after.HWM>>20, note)
			}
		}
		if zkOK && apOK {
			for i, m := range zk.mem {
				if i < len(ap.mem) {
					r := float64(m.after.RSS) / float64(ap.mem[i].after.RSS)
					fmt.Printf("VmRSS zkafka/ZooKeeper after %d znodes: %.2f (Apache ZooKeeper -Xmx%s)\n", m.want, r, *heap)
				}
			}
		}
	}
}

func short(name string) string {
	if strings.HasPrefix(name, "zkafka") {
		return "zkafka"
	}
	return name
}

func find(results []*serverResult, name string) (*serverResult, bool) {
	for _, r := range results {
		if short(r.name) == name {
			return r, true
		}
	}
	return nil, false
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// medianIndex returns the index of the median of ps by f.
func medianIndex(ps []*phase, f func(*phase) float64) int {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return f(ps[idx[i]]) < f(ps[idx[j]]) })
	return idx[len(idx)/2]
}

// ratios prints a/b of each case per round, best and median.
func ratios(title string, a, b *serverResult, sessions []int) {
	fmt.Printf("\n%-45s %-17s %-6s  %-17s %-6s\n", title+", per round (side by side)", "ops/s best median", "(≥2)", "p99 best median", "(≤0.5)")
	for _, n := range sessions {
		for _, op := range []string{"create", "set", "get"} {
			if !measured(op) {
				continue
			}
			pa, pb := a.phases[key(op, n)], b.phases[key(op, n)]
			var tr, lr []float64
			for i := range min(len(pa), len(pb)) {
				tr = append(tr, pa[i].rate()/pb[i].rate())
				lr = append(lr, float64(pa[i].lat.Percentile(99))/float64(pb[i].lat.Percentile(99)))
			}
			sort.Float64s(tr)
			sort.Float64s(lr)
			fmt.Printf("%-8s %4d sessions %31.2f %6.2f %-6s  %8.2f %6.2f %-6s\n", op, n,
				tr[len(tr)-1], tr[len(tr)/2], met(tr[len(tr)/2] >= 2), lr[0], lr[len(lr)/2], met(lr[len(lr)/2] <= 0.5))
		}
	}
}
