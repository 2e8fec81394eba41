package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// The descriptor-exhaustion test runs `zkafka run` in a child process (this
// test binary run as the command, see command_test.go) whose RLIMIT_NOFILE is
// lowered, once both servers are up, to a few descriptors above what it
// has open. The parent then opens connections to one port until the child
// logs that accept failed with EMFILE, closes them, and checks that the
// port serves again — first the Kafka listener, then the ZooKeeper client
// port.
const (
	childHeadroom = 16 // descriptors the child may open past its count
	emfileText    = "too many open files"
)

// lowerFDLimitOnceUp is run in the child (see commandMain) when lowFDEnv
// names "zkAddr,kafkaAddr": once both accept, its descriptor limit drops
// to its open count + childHeadroom.
func lowerFDLimitOnceUp(addrs string) {
	for _, addr := range strings.Split(addrs, ",") {
		for {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(200 * time.Millisecond) // let the probes' server sides close
	fds, _ := os.ReadDir("/proc/self/fd")
	var r syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
	r.Cur = uint64(len(fds) + childHeadroom)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		fmt.Fprintln(os.Stderr, "test child: setrlimit:", err)
		os.Exit(3)
	}
	fmt.Fprintf(os.Stderr, "test child: RLIMIT_NOFILE=%d with %d open\n", r.Cur, len(fds))
}

// freeAddr returns a 127.0.0.1 address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// lowFDChild is the running child process and its log.
type lowFDChild struct {
	t       *testing.T
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
}

func startLowFDChild(t *testing.T, zkAddr, kafkaAddr string) *lowFDChild {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "child.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := commandProcess([]string{"run", "-data", filepath.Join(dir, "data"),
		"-zookeeper-addr", zkAddr, "-kafka-addr", kafkaAddr}, lowFDEnv+"="+zkAddr+","+kafkaAddr)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &lowFDChild{t: t, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(c.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.exited
		if t.Failed() {
			t.Logf("child log:\n%s", c.log())
		}
	})
	return c
}

func (c *lowFDChild) log() string {
	b, _ := os.ReadFile(c.logPath)
	return string(b)
}

// waitLog polls the child's log until it has a line holding every one of
// words, at most timeout.
func (c *lowFDChild) waitLog(timeout time.Duration, words ...string) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, l := range strings.Split(c.log(), "\n") {
			all := true
			for _, w := range words {
				all = all && strings.Contains(l, w)
			}
			if all {
				return true
			}
		}
		select {
		case <-c.exited:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

// exhaust opens connections to addr until the child logs an accept
// failure with EMFILE on it, and returns them (the caller closes them).
func (c *lowFDChild) exhaust(addr string) []net.Conn {
	c.t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	var conns []net.Conn
	for i := 0; i < 4*childHeadroom+64; i++ {
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			break
		}
		conns = append(conns, nc)
		if i >= childHeadroom && c.waitLog(50*time.Millisecond, ":"+port, emfileText) {
			return conns
		}
	}
	if !c.waitLog(10*time.Second, ":"+port, emfileText) {
		c.t.Fatalf("%d connections to %s and the child never logged %q", len(conns), addr, emfileText)
	}
	return conns
}

func closeAll(conns []net.Conn) {
	for _, nc := range conns {
		nc.Close()
	}
}

// apiVersions sends a Kafka ApiVersions v0 request on a new connection and
// reports whether a response with its correlation id came back.
func apiVersions(addr string) error {
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(2 * time.Second))
	req := binary.BigEndian.AppendUint32(nil, 10) // size of what follows
	req = binary.BigEndian.AppendUint16(req, 18)  // ApiVersions
	req = binary.BigEndian.AppendUint16(req, 0)   // version 0
	req = binary.BigEndian.AppendUint32(req, 4242)
	req = binary.BigEndian.AppendUint16(req, 0xffff) // null client id
	if _, err := nc.Write(req); err != nil {
		return err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(bufio.NewReader(nc), hdr[:]); err != nil {
		return err
	}
	if id := binary.BigEndian.Uint32(hdr[4:]); id != 4242 {
		return fmt.Errorf("correlation id %d in the response", id)
	}
	return nil
}

// zkWrite creates a znode through a go-zookeeper session on addr.
func zkWrite(addr, path string) error {
	c, _, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Create(path, []byte("x"), 0, zk.WorldACL(zk.PermAll))
	return err
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// serves polls probe until it succeeds, at most timeout.
func serves(timeout time.Duration, probe func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := probe()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// `zkafka run` out of file descriptors keeps both listeners: after
// accept failed with EMFILE and the connections are gone, the Kafka
// broker and the ZooKeeper client port serve again, and the process is
// still running.
func TestRunServesAgainAfterDescriptorExhaustion(t *testing.T) {
	zkAddr, kafkaAddr := freeAddr(t), freeAddr(t)
	c := startLowFDChild(t, zkAddr, kafkaAddr)
	if !c.waitLog(60*time.Second, "test child: RLIMIT_NOFILE=") {
		t.Fatal("the child did not come up")
	}
	if err := apiVersions(kafkaAddr); err != nil {
		t.Fatalf("kafka before the exhaustion: %v", err)
	}

	conns := c.exhaust(kafkaAddr)
	closeAll(conns)
	if err := serves(30*time.Second, func() error { return apiVersions(kafkaAddr) }); err != nil {
		t.Fatalf("kafka after %d connections hit EMFILE and closed: %v", len(conns), err)
	}

	conns = c.exhaust(zkAddr)
	closeAll(conns)
	if err := serves(30*time.Second, func() error { return zkWrite(zkAddr, "/after-emfile") }); err != nil {
		t.Fatalf("zookeeper after %d connections hit EMFILE and closed: %v", len(conns), err)
	}
	if err := apiVersions(kafkaAddr); err != nil {
		t.Fatalf("kafka at the end: %v", err)
	}
	select {
	case <-c.exited:
		t.Fatal("zkafka run exited")
	default:
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
		if code := c.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("zkafka run exited %d after SIGTERM", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("zkafka run did not stop on SIGTERM")
	}
}
