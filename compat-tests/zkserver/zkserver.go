package zkserver

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/zkafka/zkafka/internal/freeport"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Paths of Debian's Apache ZooKeeper 3.8 (package zookeeper) and its logging
// backend; see REFERENCE.md.
const (
	ApacheJar  = "/usr/share/java/zookeeper.jar"
	slf4jLog4j = "/usr/share/java/slf4j-log4j12.jar"
	log4jJar   = "/usr/share/java/log4j-1.2.jar"
	// servletAPI is what the Jetty AdminServer needs besides the jars
	// zookeeper.jar's manifest names; without it a test that turns the
	// AdminServer on (admin.enableServer=true in ExtraConfig) gets none.
	servletAPI  = "/usr/share/java/servlet-api.jar"
	apacheMain  = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	installHint = "`make compat` installs it (apt-get install -y zookeeper zookeeper-bin)"
)

// DefaultFourLetterWords is the 4lw whitelist used when Options.FourLetterWords
// is nil. srvr is used by the readiness probe.
var DefaultFourLetterWords = []string{"ruok", "srvr", "stat", "conf", "cons", "envi", "mntr", "wchs", "dump", "isro"}

// Options configure a server. The zero value is a standalone server with
// tickTime 2000, no extended types and the server's default container check
// interval.
type Options struct {
	// TickTime is zoo.cfg tickTime; 0 means 2 s. Session timeouts are
	// bounded to 2..20 ticks.
	TickTime time.Duration
	// ExtendedTypes sets extendedTypesEnabled=true (TTL nodes).
	ExtendedTypes bool
	// FourLetterWords is 4lw.commands.whitelist; nil means
	// DefaultFourLetterWords. Without srvr the readiness probe opens and
	// closes a session instead (which uses two zxids).
	FourLetterWords []string
	// ContainerCheckInterval is znode.container.checkIntervalMs: how often
	// empty containers and expired TTL nodes are deleted. 0 leaves the
	// server's default (60 s for Apache ZooKeeper).
	ContainerCheckInterval time.Duration
	// StartTimeout bounds the wait for readiness; 0 means 30 s.
	StartTimeout time.Duration
	// ExtraConfig lines are appended to zoo.cfg verbatim ("key=value").
	ExtraConfig []string
	// ExtraArgs are passed to `zkafka zookeeper` before the zoo.cfg path
	// (for example "-log-level", "debug"). Ignored by StartApache.
	ExtraArgs []string
	// ApacheClassPath are jars appended to Apache ZooKeeper's class path:
	// NettyJars for serverCnxnFactory=NettyServerCnxnFactory (the secure
	// client port). Ignored by StartZkafka.
	ApacheClassPath []string
	// JVMFlags are Java system properties ("-Dkey=value") as users give
	// them in SERVER_JVMFLAGS: on Apache ZooKeeper's java command line, and
	// in zkafka's environment as SERVER_JVMFLAGS (the JAAS file of SASL).
	JVMFlags []string
}

// NettyJars are the Netty jars of Debian's packages that Apache
// ZooKeeper's Netty connection factory needs beyond its default class path.
var NettyJars = []string{"/usr/share/java/netty-codec.jar", "/usr/share/java/netty-handler.jar"}

func (o Options) tickTime() time.Duration {
	if o.TickTime <= 0 {
		return 2 * time.Second
	}
	return o.TickTime
}

func (o Options) startTimeout() time.Duration {
	if o.StartTimeout <= 0 {
		return 30 * time.Second
	}
	return o.StartTimeout
}

func (o Options) words() []string {
	if o.FourLetterWords == nil {
		return DefaultFourLetterWords
	}
	return o.FourLetterWords
}

// Server is one ZooKeeper server process. Its methods are not safe for
// concurrent use by several goroutines, except Addr, Kind, Dir and LogPath.
type Server struct {
	t       testing.TB
	kind    string // "apache" or "zkafka"
	opts    Options
	dir     string // holds zoo.cfg, log4j.properties, server.log, data/
	addr    string // 127.0.0.1:port, fixed for the life of the Server
	argv    []string
	env     []string // added to the process's environment
	logPath string

	// Ensemble members only (see ensemble.go).
	id       uint64 // myid; 0 for a standalone server
	peerPort int

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	werr error         // cmd.Wait's result, valid after done is closed
	logf *os.File
}

// Addr is the client address, "127.0.0.1:port". It stays the same across
// Restart.
func (s *Server) Addr() string { return s.addr }

// Kind is "apache" or "zkafka".
func (s *Server) Kind() string { return s.kind }

// Dir is the server's directory: zoo.cfg, server.log and data/.
func (s *Server) Dir() string { return s.dir }

// LogPath is the file that receives the process's stdout and stderr.
func (s *Server) LogPath() string { return s.logPath }

// Pid is the running process's id (0 before the first start).
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Running reports whether the process has been started and has not exited.
func (s *Server) Running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// StartApache starts Apache ZooKeeper 3.8 from Debian's package as a java
// process and waits until it is ready. It fails the test (never skips) when
// the package is not installed.
func StartApache(t testing.TB, opts Options) *Server {
	t.Helper()
	for _, p := range []string{ApacheJar, slf4jLog4j, log4jJar} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("zkserver: Apache ZooKeeper is not installed (%s missing): %s", p, installHint)
		}
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("zkserver: no java command on PATH (Apache ZooKeeper needs Java 11+): %s", installHint)
	}
	s := newServer(t, "apache", opts)
	writeFile(t, filepath.Join(s.dir, "log4j.properties"), log4jProperties)
	s.argv = []string{java,
		"-Xms32m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dlog4j.configuration=file:" + filepath.Join(s.dir, "log4j.properties"),
	}
	if opts.ExtendedTypes {
		s.argv = append(s.argv, "-Dzookeeper.extendedTypesEnabled=true")
	}
	if opts.ContainerCheckInterval > 0 {
		s.argv = append(s.argv, "-Dznode.container.checkIntervalMs="+strconv.FormatInt(opts.ContainerCheckInterval.Milliseconds(), 10))
	}
	s.argv = append(s.argv, opts.JVMFlags...)
	cp := append([]string{s.dir, ApacheJar, slf4jLog4j, log4jJar, servletAPI}, opts.ApacheClassPath...)
	s.argv = append(s.argv, "-cp", strings.Join(cp, ":"),
		apacheMain, filepath.Join(s.dir, "zoo.cfg"))
	s.start()
	return s
}

// StartZkafka starts `zkafka zookeeper zoo.cfg` and waits until it is ready.
// The binary is $ZKAFKA_BIN, else bin/zkafka under the module root; when
// neither exists it is built with `go build -o` into a temporary directory.
func StartZkafka(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := ZkafkaBinary(t)
	s := newServer(t, "zkafka", opts)
	s.argv = append([]string{bin, "zookeeper"}, opts.ExtraArgs...)
	s.argv = append(s.argv, filepath.Join(s.dir, "zoo.cfg"))
	if len(opts.JVMFlags) > 0 {
		s.env = []string{"SERVER_JVMFLAGS=" + strings.Join(opts.JVMFlags, " ")}
	}
	s.start()
	return s
}

// ZkafkaBinary returns the path of the zkafka binary to test, building it into
// a test temporary directory when it does not exist.
func ZkafkaBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("ZKAFKA_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("zkserver: ZKAFKA_BIN=%s: %v", p, err)
		}
		return p
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatalf("zkserver: %v", err)
	}
	p := filepath.Join(root, "bin", "zkafka")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	out := filepath.Join(t.TempDir(), "zkafka")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/zkafka")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zkserver: go build ./cmd/zkafka: %v\n%s", err, b)
	}
	return out
}

// ModuleRoot walks up from the working directory to the directory holding
// go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func newServer(t testing.TB, kind string, opts Options) *Server {
	t.Helper()
	dir := t.TempDir()
	s := &Server{t: t, kind: kind, opts: opts, dir: dir, logPath: filepath.Join(dir, "server.log")}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatalf("zkserver: free port: %v", err)
	}
	s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	writeFile(t, filepath.Join(dir, "zoo.cfg"), s.zooCfg(port))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("zkserver: %s server %s log tail (%s):\n%s", s.kind, s.addr, s.logPath, s.LogTail(60))
		}
		s.Stop()
	})
	return s
}

func (s *Server) zooCfg(port int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\n", s.opts.tickTime().Milliseconds())
	fmt.Fprintf(&b, "dataDir=%s\n", filepath.Join(s.dir, "data"))
	fmt.Fprintf(&b, "clientPort=%d\n", port)
	b.WriteString("clientPortAddress=127.0.0.1\n")
	b.WriteString("maxClientCnxns=0\n")
	b.WriteString("admin.enableServer=false\n")
	fmt.Fprintf(&b, "4lw.commands.whitelist=%s\n", strings.Join(s.opts.words(), ","))
	if s.opts.ExtendedTypes {
		b.WriteString("extendedTypesEnabled=true\n")
	}
	if s.opts.ContainerCheckInterval > 0 {
		fmt.Fprintf(&b, "znode.container.checkIntervalMs=%d\n", s.opts.ContainerCheckInterval.Milliseconds())
	}
	for _, l := range s.opts.ExtraConfig {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// start launches the process and waits for readiness; it fails the test on
// error.
func (s *Server) start() {
	s.t.Helper()
	s.launch()
	if err := s.waitReady(s.opts.startTimeout()); err != nil {
		s.Kill()
		s.t.Fatalf("zkserver: %s server on %s not ready: %v\nlog tail (%s):\n%s", s.kind, s.addr, err, s.logPath, s.LogTail(40))
	}
}

// launch starts the process without waiting for readiness.
func (s *Server) launch() {
	s.t.Helper()
	f, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	fmt.Fprintf(f, "=== zkserver: starting %s\n", strings.Join(s.argv, " "))
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Dir = s.dir
	if len(s.env) > 0 {
		cmd.Env = append(os.Environ(), s.env...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	// Own process group so Stop reaches children; die with the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		s.t.Fatalf("zkserver: start %s: %v", s.kind, err)
	}
	s.cmd, s.logf, s.done = cmd, f, make(chan struct{})
	go func(done chan struct{}) {
		s.werr = cmd.Wait()
		close(done)
	}(s.done)
}

// waitReady polls the server until it answers, the process exits or the
// timeout passes.
func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	probe := s.probe()
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("process exited before it was ready: %v", s.werr)
		default:
		}
		if last = probe(); last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer within %v: %v", timeout, last)
}

func (s *Server) probe() func() error {
	has := func(w string) bool {
		for _, x := range s.opts.words() {
			if x == w || x == "*" {
				return true
			}
		}
		return false
	}
	// ruok is not enough: Apache ZooKeeper answers imok while srvr still says
	// "This ZooKeeper instance is not currently serving requests".
	switch {
	case has("srvr"):
		return func() error {
			out, err := FourLetterWord(s.addr, "srvr", time.Second)
			if err != nil {
				return err
			}
			if !strings.Contains(out, "Mode:") {
				return fmt.Errorf("srvr answered %q", out)
			}
			return nil
		}
	default:
		return func() error { return handshake(s.addr, time.Second) }
	}
}

// FourLetterWord sends a four-letter command and returns the whole answer
// (the server closes the connection after it).
func FourLetterWord(addr, cmd string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(c, 1<<20))
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

// handshake opens a session with a ConnectRequest and closes it again with a
// closeSession request, without the go-zookeeper client (whose Connect retries
// forever in the background).
func handshake(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd(16), readOnly.
	req := []byte{0, 0, 0, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x27, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16}
	req = append(req, make([]byte, 16)...)
	req = append(req, 0)
	if _, err := c.Write(req); err != nil {
		return err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	n := int(hdr[0])<<24 | int(hdr[1])<<16 | int(hdr[2])<<8 | int(hdr[3])
	if n < 36 || n > 64 {
		return fmt.Errorf("bad ConnectResponse length %d", n)
	}
	resp := make([]byte, n)
	if _, err := io.ReadFull(c, resp); err != nil {
		return err
	}
	if bytes.Equal(resp[4:8], []byte{0, 0, 0, 0}) {
		return errors.New("server refused the session (timeout 0)")
	}
	// closeSession: xid 1, type -11.
	_, _ = c.Write([]byte{0, 0, 0, 8, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf5})
	_, _ = io.ReadFull(c, hdr[:])
	return nil
}

// Stop sends SIGTERM to the process group, waits up to 10 s, then SIGKILL.
// Stopping a stopped server does nothing.
func (s *Server) Stop() {
	if !s.Running() {
		s.closeLog()
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGCONT) // in case a test stopped it
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.t.Logf("zkserver: %s server %s ignored SIGTERM for 10s; killing it", s.kind, s.addr)
		s.Kill()
	}
	s.closeLog()
}

// Kill sends SIGKILL to the process group and waits for the exit.
func (s *Server) Kill() {
	if !s.Running() {
		s.closeLog()
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.t.Errorf("zkserver: %s server pid %d survived SIGKILL for 10s", s.kind, s.cmd.Process.Pid)
	}
	s.closeLog()
}

// Restart stops the server (gracefully) and starts it again with the same
// port, configuration and data directory, and waits until it is ready.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

func (s *Server) closeLog() {
	if s.logf != nil {
		s.logf.Close()
		s.logf = nil
	}
}

// LogTail returns the last n lines of the server log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort is a port on 127.0.0.1 free when asked, below the ephemeral
// range and not returned before by this process (internal/freeport).
func freePort() (int, error) { return freeport.Port() }

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const log4jProperties = `log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.Threshold=INFO
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
`
