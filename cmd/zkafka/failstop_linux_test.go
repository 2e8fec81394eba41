package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/zkafka/zkafka/internal/freeport"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestZookeeperExitsWhenItsLogFails: `zkafka zookeeper` whose raft log
// cannot be written (the file-size limit is reached) logs the cause and
// exits non-zero, rather than keeping its listener open and waiting for a
// signal.
func TestZookeeperExitsWhenItsLogFails(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	cfg := filepath.Join(dir, "zoo.cfg")
	text := fmt.Sprintf("tickTime=200\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n", filepath.Join(dir, "data"), port)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startChild(t, 1<<20, "zookeeper", cfg)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	fillUntilFailure(t, p, addr)
	code := p.wait(t, 60*time.Second)
	if code == 0 {
		t.Fatalf("zkafka zookeeper exited 0 after its log failed; stderr:\n%s", p.stderr())
	}
	if !strings.Contains(p.stderr(), "file too large") {
		t.Fatalf("the cause (file too large) is not logged; stderr:\n%s", p.stderr())
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("the client port still accepts after the exit")
	}
}

// child is a zkafka command run by startChild.
type child struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	errb bytes.Buffer
	done chan struct{}
	err  error // set before done is closed
}

func (c *child) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errb.Write(p)
}

func (c *child) stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.errb.String()
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// wait waits for the child to exit and returns its exit code; it kills
// the child and fails the test after limit.
func (c *child) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(limit):
		c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("zkafka did not exit within %v; stderr:\n%s", limit, c.stderr())
	}
	var ee *exec.ExitError
	if errors.As(c.err, &ee) {
		return ee.ExitCode()
	}
	if c.err != nil {
		t.Fatalf("zkafka: %v", c.err)
	}
	return 0
}

// startChild runs this test binary as `zkafka args...` under a file-size
// limit of fsize bytes; it is killed at the end of the test.
func startChild(t *testing.T, fsize int, args ...string) *child {
	t.Helper()
	c := &child{cmd: commandProcess(args, fsizeEnv+"="+strconv.Itoa(fsize)), done: make(chan struct{})}
	c.cmd.Stderr = c
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.err = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		if !c.exited() {
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// fillUntilFailure waits for the ZooKeeper server at addr, then writes
// 64 KiB nodes until a write fails.
func fillUntilFailure(t *testing.T, p *child, addr string) {
	t.Helper()
	waitAccepting(t, p, addr)
	zc, _, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogger(quietLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	data := bytes.Repeat([]byte("z"), 64<<10)
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatalf("1000 writes of 64 KiB under a 1 MiB file-size limit all succeeded; stderr:\n%s", p.stderr())
		}
		if _, err := zc.Create(fmt.Sprintf("/n%d", i), data, 0, zk.WorldACL(zk.PermAll)); err != nil {
			if i == 0 {
				t.Fatalf("the first write failed: %v; stderr:\n%s", err, p.stderr())
			}
			return
		}
	}
}

// waitAccepting waits until the child accepts connections on addr.
func waitAccepting(t *testing.T, p *child, addr string) {
	t.Helper()
	checkFor(t, 60*time.Second, addr+" to accept", func() bool {
		if p.exited() {
			t.Fatalf("zkafka exited before serving; stderr:\n%s", p.stderr())
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkFor polls cond until it holds, failing the test after limit.
func checkFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// quietLogger discards the go-zookeeper client's log.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// TestRunExitsWhenZookeeperLogFails: `zkafka run` (ZooKeeper and a broker
// in one process) exits non-zero with the cause logged when the ZooKeeper
// server's log cannot be written.
func TestRunExitsWhenZookeeperLogFails(t *testing.T) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	kafkaAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	p := startChild(t, 1<<20, "run", "-data", filepath.Join(t.TempDir(), "data"),
		"-zookeeper-addr", addr, "-kafka-addr", kafkaAddr)
	waitAccepting(t, p, kafkaAddr) // the broker is up: its start is not what fails
	fillUntilFailure(t, p, addr)
	code := p.wait(t, 60*time.Second)
	if code == 0 {
		t.Fatalf("zkafka run exited 0 after its ZooKeeper log failed; stderr:\n%s", p.stderr())
	}
	if !strings.Contains(p.stderr(), "a server failed; exiting") || !strings.Contains(p.stderr(), "file too large") {
		t.Fatalf("the cause (file too large) is not logged; stderr:\n%s", p.stderr())
	}
}
