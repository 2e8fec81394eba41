package zkshell

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// asCommandEnv set makes this test binary `zkafka zk` (Command()) on its
// arguments, so that the process tests see what a person sees.
const asCommandEnv = "ZKSHELL_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommandEnv) != "" {
		os.Exit(commandMain())
	}
	os.Exit(m.Run())
}

// commandMain runs Command() as zkafka's runMain would: an error with an
// exit code has been printed; any other is printed on one line, status 1.
func commandMain() int {
	cmd := Command()
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetArgs(os.Args[1:])
	err := cmd.Execute()
	var coded interface{ ExitCode() int }
	switch {
	case err == nil:
		return 0
	case errors.As(err, &coded):
		return coded.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "zkafka: %v\n", err)
		return 1
	}
}

// shellProcess is `zkafka zk args...` as a child process.
func shellProcess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCommandEnv+"=1")
	return cmd
}

// zkOnce runs `zkafka zk args...` with stdin, bounded in time, and
// returns its exit status and output.
func zkOnce(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := shellProcess(args...)
	var out, errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var timedOut atomic.Bool
	bound := time.AfterFunc(60*time.Second, func() { timedOut.Store(true); cmd.Process.Kill() })
	err := cmd.Wait()
	bound.Stop()
	if timedOut.Load() {
		t.Fatalf("zkafka zk %v did not exit within 60 s; stderr:\n%s", args, errOut.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// TestOneCommandFromArguments: `zkafka zk --zookeeper A cmd args` runs one
// command, prints its result on stdout and exits 0; a failed command
// prints zkCli's one line on stderr and exits 1, a usage error 2, a server
// that does not answer one line and 1.
func TestOneCommandFromArguments(t *testing.T) {
	addr := startServer(t)
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"--zookeeper", addr, "create", "/one", "two words"}, 0, "Created /one\n", ""},
		{[]string{"--server", addr, "get", "/one"}, 0, "two words\n", ""},
		{[]string{"--server", addr, "ls", "/"}, 0, "[one, zookeeper]\n", ""},
		{[]string{"--zookeeper", addr, "get", "/nope"}, 1, "", "Node does not exist: /nope\n"},
		{[]string{"--zookeeper", addr, "create", "-x", "/a"}, 2, "", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -x\n"},
		{[]string{"--zookeeper", addr, "set", "/one"}, 2, "", "set [-s] [-v version] path data\n"},
		{[]string{"--zookeeper", addr + "/one", "create", "/in-chroot", "c"}, 0, "Created /in-chroot\n", ""},
		{[]string{"--zookeeper", addr, "ls", "/one"}, 0, "[in-chroot]\n", ""},
		{[]string{"--zookeeper", addr + "/one", "ls", "-R", "/"}, 0, "/\n/in-chroot\n", ""},
		{[]string{"--zookeeper", addr, "-o", "json", "get", "/one/in-chroot"}, 0, `{"path":"/one/in-chroot","data":"c"}` + "\n", ""},
		{[]string{"--zookeeper", addr, "-o", "json", "ls", "/one"}, 0, `{"path":"/one","children":["in-chroot"]}` + "\n", ""},
		{[]string{"--zookeeper", addr, "-o", "yaml", "ls", "/one"}, 1, "", "zkafka: -o yaml: the output format is text or json\n"},
		{[]string{"--zookeeper", "127.0.0.1:1", "--timeout", "2s", "ls", "/"}, 1, "", "zkafka: cannot connect to 127.0.0.1:1 within 2s\n"},
	} {
		code, stdout, stderr := zkOnce(t, "", tc.args...)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("zkafka zk %q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
}

// TestScriptFromStdin: commands on stdin that is not a terminal run one a
// line, without a prompt, as zkCli runs them, with the session's events.
func TestScriptFromStdin(t *testing.T) {
	addr := startServer(t)
	code, stdout, stderr := zkOnce(t, "create /s 1\nget -w /s\nset /s 2\nhistory\nquit\nget /s\n", "--zookeeper", addr)
	want := "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n" +
		"Created /s\n1\n" +
		"\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/s\n" +
		"0 - create /s 1\n1 - get -w /s\n2 - set /s 2\n3 - history\n" +
		"\nWATCHER::\n\nWatchedEvent state:Closed type:None path:null\n"
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("exit %d\nstdout %q\nwant   %q\nstderr %q", code, stdout, want, stderr)
	}
}
