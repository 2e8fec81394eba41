// Package benchkit holds the small parts the load generators under
// compat-tests share: child processes in their own process group, CPU time
// and resident memory read from /proc, latency percentiles, free ports and
// the module root.
package benchkit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/zkafka/zkafka/internal/freeport"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat
// (100 on every Linux this runs on).
const clockTicks = 100

// CPUTime returns the user+system CPU time pid has used so far, from
// /proc/<pid>/stat (all of its threads; not its children).
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// comm may contain spaces and parentheses: fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("benchkit: bad /proc/pid/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, errors.New("benchkit: short /proc/pid/stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("benchkit: bad utime/stime")
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// SelfCPU returns the CPU time this process has used (getrusage).
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Memory is a process's resident memory from /proc/<pid>/status.
type Memory struct {
	RSS, HWM int64 // VmRSS and VmHWM (peak), bytes
}

// ReadMemory reads VmRSS and VmHWM of pid.
func ReadMemory(pid int) (Memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	defer f.Close()
	var m Memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &m.RSS
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &m.HWM
		default:
			continue
		}
		fs := strings.Fields(line)
		if len(fs) >= 2 {
			kb, _ := strconv.ParseInt(fs[1], 10, 64)
			*dst = kb << 10
		}
	}
	return m, sc.Err()
}

// Latencies collects durations; Percentile sorts them once.
type Latencies struct {
	d      []time.Duration
	sorted bool
}

// Add records one latency.
func (l *Latencies) Add(d time.Duration) { l.d = append(l.d, d); l.sorted = false }

// Merge appends the latencies of o.
func (l *Latencies) Merge(o *Latencies) { l.d = append(l.d, o.d...); l.sorted = false }

// Len is the number of latencies recorded.
func (l *Latencies) Len() int { return len(l.d) }

// Percentile returns the p-th percentile (0 < p ≤ 100), 0 when empty.
func (l *Latencies) Percentile(p float64) time.Duration {
	if len(l.d) == 0 {
		return 0
	}
	if !l.sorted {
		slices.Sort(l.d)
		l.sorted = true
	}
	i := int(float64(len(l.d))*p/100+0.5) - 1
	return l.d[min(max(i, 0), len(l.d)-1)]
}

// Ms formats d in milliseconds with a precision that suits benchmarks.
func Ms(d time.Duration) string {
	ms := float64(d) / 1e6
	switch {
	case d == 0:
		return "-"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 3, 64)
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64)
	default:
		return strconv.FormatFloat(ms, 'f', 0, 64)
	}
}

// Ratio formats a/b, "-" when either is missing.
func Ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "-"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64)
}

// FreePort returns a TCP port free on 127.0.0.1 right now.
func FreePort() (int, error) { return freeport.Port() }

// ModuleRoot walks up from the working directory to the directory with go.mod.
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

// Proc is a child process in its own process group that dies with us.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	Log  string // path of its combined stdout and stderr
	done chan struct{}
	err  error
}

// Start starts argv with its output appended to logPath.
func Start(name, logPath, dir string, argv ...string) (*Proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "=== %s: %s\n", name, strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &Proc{Name: name, Cmd: cmd, Log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// WaitReady polls probe until it succeeds, the process exits or timeout
// passes.
func (p *Proc) WaitReady(timeout time.Duration, probe func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited before it was ready (%v); log tail:\n%s", p.Name, err, p.Tail(20))
		}
		if last = probe(); last == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready within %v: %v; log tail:\n%s", p.Name, timeout, last, p.Tail(20))
}

// Signal sends sig to the process (not its group): kill -9, SIGSTOP,
// SIGCONT and SIGTERM of one server in a cluster test.
func (p *Proc) Signal(sig syscall.Signal) error { return syscall.Kill(p.Pid(), sig) }

// Wait waits up to timeout for the process to end and reports whether it
// did, and how.
func (p *Proc) Wait(timeout time.Duration) (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	case <-time.After(timeout):
		return false, nil
	}
}

// Stop sends SIGTERM to the group, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	if p == nil {
		return
	}
	pid := p.Pid()
	syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		syscall.Kill(-pid, syscall.SIGKILL)
		<-p.done
	}
}

// Tail returns the last n lines of the log.
func (p *Proc) Tail(n int) string {
	f, err := os.Open(p.Log)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// DialReady is a probe that succeeds once addr accepts TCP connections.
func DialReady(addr string) func() error {
	return func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// atExit holds what Exit and an interrupt run before the process ends.
var (
	atExitMu sync.Mutex
	atExit   []func()
)

// AtExit registers f to run (last registered first) on Exit or on SIGINT
// or SIGTERM, so that servers are stopped and temporary data removed even
// when a run fails or is interrupted.
func AtExit(f func()) {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	if atExit == nil {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		go func() {
			<-ch
			Exit(130)
		}()
	}
	atExit = append(atExit, f)
}

// Exit runs the AtExit functions and exits with code.
func Exit(code int) {
	atExitMu.Lock()
	fs := atExit
	atExit = nil
	atExitMu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	os.Exit(code)
}
