package kcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

// readyTimeout bounds a broker's start: a restarted broker registers only
// once its previous session's ephemeral /brokers/ids/{id} has expired.
const readyTimeout = 45 * time.Second

// startBroker starts b's process (a new log file per start) and waits
// until it has registered and accepts connections.
func (c *Cluster) startBroker(b *Broker) {
	c.T.Helper()
	b.starts++
	// Registered once /brokers/ids/{id} is there and newer than any left
	// by the previous process (whose session may not have expired yet).
	path := fmt.Sprintf("/brokers/ids/%d", b.ID)
	var oldCzxid int64
	if _, st, err := c.get(path); err == nil {
		oldCzxid = st.Czxid
	}
	log := filepath.Join(b.Dir, fmt.Sprintf("broker-%d.%d.log", b.ID, b.starts))
	p, err := benchkit.Start(fmt.Sprintf("broker %d", b.ID), log, b.Dir, c.Opts.Bin, "broker", "-log-level", c.Opts.LogLevel, b.Props)
	if err != nil {
		c.T.Fatalf("start broker %d: %v", b.ID, err)
	}
	b.proc, b.paused = p, false
	err = p.WaitReady(readyTimeout, func() error {
		if _, st, err := c.get(path); err != nil || st.Czxid == oldCzxid {
			return fmt.Errorf("%s not registered by this process yet", path)
		}
		return benchkit.DialReady(b.Addr)()
	})
	if err != nil {
		c.T.Fatalf("broker %d: %v", b.ID, err)
	}
}

// Pid is the broker's process id (0 when it is not running).
func (b *Broker) Pid() int {
	if b.proc == nil {
		return 0
	}
	return b.proc.Pid()
}

// Running reports whether the broker's process is alive (paused or not).
func (b *Broker) Running() bool {
	if b.proc == nil {
		return false
	}
	done, _ := b.proc.Exited()
	return !done
}

// Log is the path of the broker's current log file.
func (b *Broker) Log() string {
	if b.proc == nil {
		return ""
	}
	return b.proc.Log
}

// Tail is the last n lines of the broker's current log.
func (b *Broker) Tail(n int) string {
	if b.proc == nil {
		return "(not started)"
	}
	return b.proc.Tail(n)
}

// Kill9 kills broker id with SIGKILL and waits for it to end.
func (c *Cluster) Kill9(id int32) {
	c.T.Helper()
	c.signalAndWait(id, syscall.SIGKILL, 10*time.Second)
}

// Term sends SIGTERM (a controlled shutdown) to broker id and waits up to
// timeout for it to end; it fails the test if the broker did not end, or
// ended with an error.
func (c *Cluster) Term(id int32, timeout time.Duration) {
	c.T.Helper()
	if err := c.signalAndWait(id, syscall.SIGTERM, timeout); err != nil {
		c.T.Fatalf("broker %d after SIGTERM: %v; log tail:\n%s", id, err, c.Broker(id).Tail(20))
	}
}

func (c *Cluster) signalAndWait(id int32, sig syscall.Signal, timeout time.Duration) error {
	c.T.Helper()
	b := c.Broker(id)
	if !b.Running() {
		c.T.Fatalf("broker %d is not running", id)
	}
	if b.paused && sig != syscall.SIGKILL {
		c.T.Fatalf("broker %d is paused: %v would wait for ever", id, sig)
	}
	if err := b.proc.Signal(sig); err != nil {
		c.T.Fatalf("signal broker %d: %v", id, err)
	}
	done, err := b.proc.Wait(timeout)
	if !done {
		c.T.Fatalf("broker %d still running %v after %v; log tail:\n%s", id, timeout, sig, b.Tail(20))
	}
	b.paused = false
	return err
}

// Pause stops broker id with SIGSTOP: it keeps its sockets and its session
// but runs nothing, so ZooKeeper expires it after the session timeout.
func (c *Cluster) Pause(id int32) {
	c.T.Helper()
	c.signal(id, syscall.SIGSTOP)
	c.Broker(id).paused = true
	c.WaitFor(fmt.Sprintf("broker %d stopped", id), 5*time.Second, func() bool { return c.ProcState(id) == "T" })
}

// Resume continues broker id with SIGCONT.
func (c *Cluster) Resume(id int32) {
	c.T.Helper()
	c.signal(id, syscall.SIGCONT)
	c.Broker(id).paused = false
	c.WaitFor(fmt.Sprintf("broker %d running again", id), 5*time.Second, func() bool { return c.ProcState(id) != "T" })
}

func (c *Cluster) signal(id int32, sig syscall.Signal) {
	c.T.Helper()
	b := c.Broker(id)
	if !b.Running() {
		c.T.Fatalf("broker %d is not running", id)
	}
	if err := b.proc.Signal(sig); err != nil {
		c.T.Fatalf("signal broker %d: %v", id, err)
	}
}

// Restart starts broker id again (it must have ended) on its data
// directory and config, and waits until it has registered.
func (c *Cluster) Restart(id int32) {
	c.T.Helper()
	b := c.Broker(id)
	if b.Running() {
		c.T.Fatalf("broker %d is still running", id)
	}
	c.startBroker(b)
}

// ProcState is the one-letter state of broker id's process from
// /proc/<pid>/stat (R, S, T for stopped, ...; "" when not running).
func (c *Cluster) ProcState(id int32) string {
	b := c.Broker(id)
	if !b.Running() {
		return ""
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", b.Pid()))
	if err != nil {
		return ""
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}
