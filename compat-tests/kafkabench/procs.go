package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

// cluster is zkafka's ZooKeeper and one broker, each its own process.
type cluster struct {
	zk, broker *benchkit.Proc
	brokerAddr string
	logDir     string
	how        string // how the broker was started
}

// startCluster starts `zkafka zookeeper zoo.cfg` and `zkafka broker
// server.properties`. While `zkafka broker` is not wired yet it falls back
// to this program re-executed as the broker (package broker in-process,
// what `zkafka broker` will run). With a profile path the broker always
// runs that way, under runtime/pprof.
func startCluster(bin, dir, profile string) (*cluster, error) {
	zkPort, err := benchkit.FreePort()
	if err != nil {
		return nil, err
	}
	zkAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(zkPort))
	zkData := filepath.Join(dir, "zookeeper")
	os.MkdirAll(zkData, 0o755)
	zooCfg := filepath.Join(dir, "zoo.cfg")
	cfg := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n4lw.commands.whitelist=srvr,ruok\n", zkData, zkPort)
	if err := os.WriteFile(zooCfg, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	c := &cluster{logDir: filepath.Join(dir, "kafka-logs")}
	c.zk, err = benchkit.Start("zkafka zookeeper", filepath.Join(dir, "zookeeper.log"), dir, bin, "zookeeper", "-log-level", "warn", zooCfg)
	if err != nil {
		return nil, err
	}
	if err := c.zk.WaitReady(30*time.Second, benchkit.DialReady(zkAddr)); err != nil {
		c.stop()
		return nil, err
	}
	port, err := benchkit.FreePort()
	if err != nil {
		c.stop()
		return nil, err
	}
	c.brokerAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	props := filepath.Join(dir, "server.properties")
	p := fmt.Sprintf("broker.id=0\nlisteners=PLAINTEXT://%s\nlog.dirs=%s\nzookeeper.connect=%s\nnum.partitions=1\n",
		c.brokerAddr, c.logDir, zkAddr)
	if err := os.WriteFile(props, []byte(p), 0o644); err != nil {
		c.stop()
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		c.stop()
		return nil, err
	}
	try := func(how string, argv ...string) error {
		c.how = how
		c.broker, err = benchkit.Start(how, filepath.Join(dir, "broker.log"), dir, argv...)
		if err != nil {
			return err
		}
		return c.broker.WaitReady(30*time.Second, benchkit.DialReady(c.brokerAddr))
	}
	if profile == "" {
		if err = try("bin/zkafka broker", bin, "broker", "-log-level", "warn", props); err == nil {
			return c, nil
		}
		fmt.Fprintf(os.Stderr, "kafkabench: `zkafka broker` did not serve (%v); running package broker from this program instead\n", firstLine(err))
	}
	if err = try("package broker in a child of kafkabench", self, "-serve-broker", props, "-cpuprofile", profile); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func firstLine(err error) string {
	s := err.Error()
	for i := range s {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

func (c *cluster) stop() {
	if c.broker != nil {
		c.broker.Stop(15 * time.Second)
		c.broker = nil
	}
	if c.zk != nil {
		c.zk.Stop(15 * time.Second)
		c.zk = nil
	}
}

// serveBroker is the -serve-broker mode: package broker in this process
// from a server.properties, as `zkafka broker` runs it, with an optional
// CPU profile written on SIGTERM.
func serveBroker(props, profile string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg, err := broker.LoadConfig(props, log)
	if err != nil {
		log.Error("bad configuration", "err", err)
		return 2
	}
	stopProfile := startProfile(profile, log)
	b, err := broker.New(cfg, log)
	if err != nil {
		log.Error("broker did not start", "err", err)
		return 1
	}
	l, err := net.Listen("tcp", cfg.ListenAddr())
	if err != nil {
		log.Error("listen", "err", err)
		return 1
	}
	go b.Serve(l)
	waitSignal()
	stopProfile()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.Shutdown(ctx)
	return 0
}

// serveKfake is the -serve-kfake mode: franz-go's in-memory fake broker on
// 127.0.0.1:port, in its own process like zkafka's broker.
func serveKfake(port int, profile string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	stopProfile := startProfile(profile, log)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			return net.Listen(network, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		}))
	if err != nil {
		log.Error("kfake", "err", err)
		return 1
	}
	waitSignal()
	stopProfile()
	c.Close()
	return 0
}

// startKfake starts this program as a kfake broker.
func startKfake(dir, profile string) (*benchkit.Proc, string, error) {
	port, err := benchkit.FreePort()
	if err != nil {
		return nil, "", err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p, err := benchkit.Start("kfake", filepath.Join(dir, "kfake.log"), dir, self, "-serve-kfake", strconv.Itoa(port), "-cpuprofile", profile)
	if err != nil {
		return nil, "", err
	}
	if err := p.WaitReady(20*time.Second, benchkit.DialReady(addr)); err != nil {
		p.Stop(5 * time.Second)
		return nil, "", err
	}
	return p, addr, nil
}

func startProfile(path string, log *slog.Logger) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		log.Error("profile", "err", err)
		return func() {}
	}
	if strings.HasSuffix(path, ".trace") { // an execution trace instead
		trace.Start(f)
		return func() { trace.Stop(); f.Close() }
	}
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}

func waitSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	<-ch
	signal.Stop(ch)
}

// ---- this machine's limits ----------------------------------------------

// tcpSink is the -tcp-sink mode: accept connections on 127.0.0.1:port one
// after another and read each to its end. With fileDir set it does what a
// produce does with the bytes: each connection's stream is read in chunk
// reads (io.ReadFull) and each chunk written to the end of a new file in
// fileDir (the socket-to-file limit).
func tcpSink(port int, fileDir string, chunk int) int {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	buf := make([]byte, max(chunk, 1))
	for conns := 0; ; conns++ {
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		var f *os.File
		if fileDir != "" {
			if f, err = os.Create(filepath.Join(fileDir, fmt.Sprintf("sink-%d", conns))); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		drain(c, f, buf)
		c.Close()
		if f != nil {
			f.Close()
		}
	}
}

// drain reads c to its end in len(buf) reads, writing each to f if f is
// not nil.
func drain(c net.Conn, f *os.File, buf []byte) {
	for {
		n, err := io.ReadFull(c, buf)
		if f != nil && n > 0 {
			if _, werr := f.Write(buf[:n]); werr != nil {
				fmt.Fprintln(os.Stderr, werr)
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// limit is one measured limit of this machine: the best rate of the reps,
// and the CPU seconds per GB the writing and reading processes spent in it
// (the kernel's copies dominate: a floor for the broker's own CPU per GB).
type limit struct {
	rate              float64 // bytes/s
	writeCPU, readCPU float64 // s/GB
	// first is the disk limit's first run: on this kind of virtual
	// machine a page the guest has not used lately costs several times
	// more to write than one a removed file just gave back, and a growing
	// log always writes such pages.
	first *limit
}

// diskLimit measures buffered sequential writes to a file in dir, up to
// size bytes or d, the best of reps. Each write is chunk bytes, no fsync,
// as the broker writes its log: one write per batch, and the raw
// produce's batch is the chunk (1 MiB writes ran at half the speed of
// 256 KiB ones here, their source no longer in the CPU's cache). Every run
// writes a new file and the files are removed only at the end, so that no
// run writes the pages an earlier one gave back: a growing log never does.
// Each run starts after settle, which on a machine with free page
// reporting waits until the freed memory is the host's again (runs over
// memory freed a moment before wrote 2–10× faster, which moved this
// yardstick by 2× between runs of the bench).
func diskLimit(dir string, size int64, chunk int, d time.Duration, reps int) (limit, error) {
	os.MkdirAll(dir, 0o755)
	defer os.RemoveAll(dir)
	buf := make([]byte, chunk)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	var best, first limit
	settle()
	for r := range reps {
		path := filepath.Join(dir, fmt.Sprintf("disklimit-%d", r))
		f, err := os.Create(path)
		if err != nil {
			return limit{}, err
		}
		var n int64
		w0 := benchkit.SelfCPU()
		start := time.Now()
		for n < size && time.Since(start) < d {
			m, err := f.Write(buf)
			n += int64(m)
			if err != nil {
				f.Close()
				return limit{}, err
			}
		}
		el := time.Since(start)
		w1 := benchkit.SelfCPU()
		f.Close()
		run := limit{rate: float64(n) / el.Seconds(), writeCPU: (w1 - w0).Seconds() / (float64(n) / 1e9)}
		if r == 0 {
			first = run
		}
		if run.rate > best.rate {
			best = run
		}
		settle()
	}
	best.first = &first
	return best, nil
}

// burn is the -burn mode: n threads spin until the process is killed (the
// CPU contention of the contended end-to-end cases).
func burn(n int) {
	runtime.GOMAXPROCS(n + 1)
	for range n {
		go func() {
			runtime.LockOSThread()
			x := uint64(1)
			for {
				x = x*6364136223846793005 + 1
			}
		}()
	}
	waitSignal()
	os.Exit(0)
}

// startBurner starts a -burn process of n threads; stop ends it.
func startBurner(dir string, n int) (stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p, err := benchkit.Start("burner", filepath.Join(dir, "burn.log"), dir, self, "-burn", strconv.Itoa(n))
	if err != nil {
		return nil, err
	}
	time.Sleep(100 * time.Millisecond)
	return func() { p.Stop(5 * time.Second) }, nil
}

// loadAvg is the one-minute load average, printed beside figures taken on
// a shared machine.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return "load " + f[0]
}
