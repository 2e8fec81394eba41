package kafkastorm

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

// TestMain builds the zkafka binary from this tree once (unless
// $ZKAFKA_BIN names one), so the test never runs a stale bin/zkafka.
func TestMain(m *testing.M) {
	if os.Getenv("ZKAFKA_BIN") != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "zkafka-storm-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := buildAndRun(m, dir)
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildAndRun(m *testing.M, dir string) int {
	root, err := zkserver.ModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bin := filepath.Join(dir, "zkafka")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/zkafka")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/zkafka: %v\n%s", err, out)
		return 1
	}
	os.Setenv("ZKAFKA_BIN", bin)
	return m.Run()
}

// server is a `zkafka run` process: ZooKeeper and one broker with the
// default configuration.
type server struct {
	t         *testing.T
	kafkaAddr string
	logPath   string
	cmd       *exec.Cmd
	exited    chan struct{}
}

// startServer runs `zkafka run` on two free 127.0.0.1 ports and waits (up
// to 60 s) until the broker has registered.
func startServer(t *testing.T) *server {
	t.Helper()
	dir := t.TempDir()
	s := &server{t: t, kafkaAddr: freeAddr(t), logPath: filepath.Join(dir, "zkafka.log"), exited: make(chan struct{})}
	out, err := os.Create(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	s.cmd = exec.Command(os.Getenv("ZKAFKA_BIN"), "run", "-data", filepath.Join(dir, "data"),
		"-zookeeper-addr", freeAddr(t), "-kafka-addr", s.kafkaAddr)
	s.cmd.Stdout, s.cmd.Stderr = out, out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(s.stop)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(s.log(), "broker registered") {
			return s
		}
		select {
		case <-s.exited:
			t.Fatalf("zkafka run exited at start:\n%s", s.tail())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("broker not registered after 60 s:\n%s", s.tail())
	return nil
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// running reports whether the process is still alive.
func (s *server) running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// peakRSS is the process's peak resident set size (VmHWM), in bytes.
func (s *server) peakRSS() int64 { return s.status("VmHWM:") }

// rss is the process's resident set size now (VmRSS), in bytes.
func (s *server) rss() int64 { return s.status("VmRSS:") }

// status reads a kB field of /proc/PID/status, in bytes.
func (s *server) status(field string) int64 {
	s.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		s.t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				s.t.Fatalf("%s %q: %v", field, rest, err)
			}
			return kb << 10
		}
	}
	s.t.Fatalf("no %s in /proc/PID/status", field)
	return 0
}

func (s *server) log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

func (s *server) tail() string {
	b := s.log()
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return b
}

// countLog counts the log lines that contain every one of parts.
func (s *server) countLog(parts ...string) int {
	n := 0
	for _, line := range strings.Split(s.log(), "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			n++
		}
	}
	return n
}

// stop sends SIGTERM and waits up to 20 s, then kills.
func (s *server) stop() {
	defer s.keepLog()
	if !s.running() {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		s.t.Errorf("zkafka run did not stop on SIGTERM within 20 s")
	}
	if bytes.Contains([]byte(s.log()), []byte("panic")) {
		s.t.Errorf("the server logged a panic:\n%s", s.tail())
	}
}

// keepLog copies the server's log to $ZKAFKA_STORM_LOG, if set, for a look
// after the test (its directory is removed).
func (s *server) keepLog() {
	if p := os.Getenv("ZKAFKA_STORM_LOG"); p != "" {
		os.WriteFile(p, []byte(s.log()), 0o644)
	}
}
