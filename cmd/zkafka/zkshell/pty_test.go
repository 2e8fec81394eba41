package zkshell

import (
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// screen is what the shell has written to its terminal.
type screen struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor polls, bounded, until the screen satisfies cond.
func (s *screen) waitFor(t *testing.T, what string, cond func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond(s.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %s; it shows:\n%q", what, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestInteractiveThroughPty drives the shell on a terminal as a person
// does: zkCli's prompt, a command, Tab completing a path, the up arrow
// recalling the last command, quit.
func TestInteractiveThroughPty(t *testing.T) {
	addr := startServer(t)
	cmd := shellProcess("--zookeeper", addr)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	var scr screen
	go io.Copy(&scr, tty)
	prompt := func(n string) string { return "[zk: " + addr + "(CONNECTED) " + n + "] " }
	has := func(s string) func(string) bool { return func(out string) bool { return strings.Contains(out, s) } }

	scr.waitFor(t, "zkCli's greeting", has("Connecting to "+addr+"\r\nWelcome to ZooKeeper!"))
	scr.waitFor(t, "the prompt", has(prompt("0")))
	scr.waitFor(t, "the session event", has("WatchedEvent state:SyncConnected type:None path:null"))
	io.WriteString(tty, "create /pty-node hello\r")
	scr.waitFor(t, "the created node", has("Created /pty-node"))
	scr.waitFor(t, "the next prompt", has(prompt("1")))

	// Tab completes /pty-n to /pty-node: the get finds the node.
	io.WriteString(tty, "get /pty-n\t")
	scr.waitFor(t, "the completed path", has("get /pty-node"))
	before := strings.Count(scr.String(), "hello")
	io.WriteString(tty, "\r")
	scr.waitFor(t, "the node's data", func(out string) bool { return strings.Count(out, "hello") > before })
	scr.waitFor(t, "the next prompt", has(prompt("2")))

	// The up arrow brings back the get; Enter runs it again.
	before = strings.Count(scr.String(), "hello")
	io.WriteString(tty, "\x1b[A")
	scr.waitFor(t, "the recalled line", func(out string) bool {
		return strings.Count(out, "get /pty-node") >= 2
	})
	io.WriteString(tty, "\r")
	scr.waitFor(t, "the data again", func(out string) bool { return strings.Count(out, "hello") > before })
	scr.waitFor(t, "the next prompt", has(prompt("3")))

	if strings.Contains(scr.String(), "Node does not exist") {
		t.Errorf("a command failed:\n%q", scr.String())
	}
	io.WriteString(tty, "quit\r")
	select {
	case err := <-done:
		var exit interface{ ExitCode() int }
		if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 0) {
			t.Errorf("quit: %v", err)
		}
		done <- err // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatalf("quit did not end the shell; the terminal shows:\n%q", scr.String())
	}
}
