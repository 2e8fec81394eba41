package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
	"github.com/zkafka/zkafka/internal/gctune"
	"github.com/zkafka/zkafka/quorum"
)

// Debian's Apache ZooKeeper 3.8 (package zookeeper); see REFERENCE.md.
const (
	apacheJar  = "/usr/share/java/zookeeper.jar"
	slf4jLog4j = "/usr/share/java/slf4j-log4j12.jar"
	log4jJar   = "/usr/share/java/log4j-1.2.jar"
)

const log4jProperties = `log4j.rootLogger=WARN, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} - %-5p [%t:%C{1}@%L] - %m%n
`

// server is one ZooKeeper server process under test.
type server struct {
	name string
	addr string
	dir  string
	proc *benchkit.Proc
}

// zooCfg writes a standalone zoo.cfg (forceSync left at its default, yes)
// into dir and returns its path and the client address.
func zooCfg(dir string) (string, string, error) {
	port, err := benchkit.FreePort()
	if err != nil {
		return "", "", err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return "", "", err
	}
	cfg := fmt.Sprintf("tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir=%s\nclientPort=%d\n"+
		"clientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n"+
		"4lw.commands.whitelist=srvr,ruok\n", data, port)
	path := filepath.Join(dir, "zoo.cfg")
	return path, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), os.WriteFile(path, []byte(cfg), 0o644)
}

// startZkafka starts `zkafka zookeeper zoo.cfg`, or, with a CPU or heap
// profile path, this program re-executed as the same server in-process
// under runtime/pprof (zkafka has no pprof endpoint).
func startZkafka(bin, dir, profile, memProfile string) (*server, error) {
	cfg, addr, err := zooCfg(dir)
	if err != nil {
		return nil, err
	}
	argv := []string{bin, "zookeeper", "-log-level", "warn", cfg}
	name := "zkafka"
	if profile != "" || memProfile != "" || *traceOut != "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		argv = []string{self, "-serve-zk", cfg, "-cpuprofile", profile, "-memprofile", memProfile,
			"-trace", *traceOut, "-trace-window", traceWin.String()}
		name = "zkafka (in-process, profiled)"
	}
	return startServer(name, dir, addr, argv)
}

// startApache starts Apache ZooKeeper 3.8 standalone as REFERENCE.md says,
// with the heap of upstream's zkEnv.sh (ZK_SERVER_HEAP=1000 MB) unless
// heap is empty (then the JVM's default).
func startApache(dir, heap string) (*server, error) {
	for _, p := range []string{apacheJar, slf4jLog4j, log4jJar} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("apache zookeeper is not installed (%s missing): apt-get install -y zookeeper", p)
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("no java on PATH: %w", err)
	}
	cfg, addr, err := zooCfg(dir)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "log4j.properties"), []byte(log4jProperties), 0o644); err != nil {
		return nil, err
	}
	argv := []string{java}
	if heap != "" {
		argv = append(argv, "-Xmx"+heap)
	}
	argv = append(argv,
		"-Dzookeeper.extendedTypesEnabled=true", "-Dznode.container.checkIntervalMs=1000",
		"-Dzookeeper.admin.enableServer=false",
		"-Dlog4j.configuration=file:"+filepath.Join(dir, "log4j.properties"),
		"-cp", strings.Join([]string{dir, apacheJar, slf4jLog4j, log4jJar}, ":"),
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg)
	return startServer("zookeeper", dir, addr, argv)
}

func startServer(name, dir, addr string, argv []string) (*server, error) {
	p, err := benchkit.Start(name, filepath.Join(dir, "server.log"), dir, argv...)
	if err != nil {
		return nil, err
	}
	s := &server{name: name, addr: addr, dir: dir, proc: p}
	if err := p.WaitReady(60*time.Second, func() error { return srvrReady(addr) }); err != nil {
		p.Stop(5 * time.Second)
		return nil, err
	}
	return s, nil
}

// srvrReady succeeds once srvr reports a Mode (Apache ZooKeeper answers
// ruok before it serves requests).
func srvrReady(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return err
	}
	b, _ := io.ReadAll(c)
	if !strings.Contains(string(b), "Mode:") {
		return fmt.Errorf("srvr answered %q", b)
	}
	return nil
}

func (s *server) stop() {
	if s.proc != nil {
		s.proc.Stop(15 * time.Second)
		s.proc = nil
	}
}

// serveZK is the -serve-zk mode: the zkafka ZooKeeper server in this
// process (what `zkafka zookeeper` runs), with a CPU profile, a heap
// profile (after a GC; the heap figures also go to stderr) and the
// flight recorder's execution trace of the last moments written on
// SIGTERM.
func serveZK(cfgPath, profile, memProfile, traceOut string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg, err := quorum.LoadConfig(cfgPath, log)
	if err != nil {
		log.Error("bad configuration", "err", err)
		return 2
	}
	var f *os.File
	if profile != "" {
		if f, err = os.Create(profile); err != nil {
			log.Error("profile", "err", err)
			return 1
		}
		pprof.StartCPUProfile(f)
	}
	var fr *trace.FlightRecorder
	if traceOut != "" {
		fr = trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: *traceWin, MaxBytes: 256 << 20})
		if err := fr.Start(); err != nil {
			log.Error("trace", "err", err)
			return 1
		}
	}
	zk, err := quorum.Start(cfg, log)
	if err != nil {
		log.Error("zookeeper did not start", "err", err)
		return 1
	}
	go gctune.Run(nil) // as `zkafka zookeeper` does
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	<-ch
	if f != nil {
		pprof.StopCPUProfile()
		f.Close()
	}
	if fr != nil {
		writeTrace(fr, traceOut, log)
	}
	if memProfile != "" {
		writeHeapProfile(memProfile, log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	zk.Shutdown(ctx)
	return 0
}

// writeHeapProfile writes the heap profile after a GC into path and logs
// the heap's figures.
func writeHeapProfile(path string, log *slog.Logger) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	log.Warn("heap", "alloc MB", ms.HeapAlloc>>20, "inuse MB", ms.HeapInuse>>20, "idle MB", ms.HeapIdle>>20,
		"released MB", ms.HeapReleased>>20, "sys MB", ms.Sys>>20, "objects", ms.HeapObjects)
	f, err := os.Create(path)
	if err != nil {
		log.Error("heap profile", "err", err)
		return
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		log.Error("heap profile", "err", err)
	}
}

// writeTrace writes the flight recorder's window into path.
func writeTrace(fr *trace.FlightRecorder, path string, log *slog.Logger) {
	f, err := os.Create(path)
	if err != nil {
		log.Error("trace", "err", err)
		return
	}
	defer f.Close()
	if _, err := fr.WriteTo(f); err != nil {
		log.Error("trace", "err", err)
	}
	fr.Stop()
}
