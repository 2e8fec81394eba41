//go:build compat

package zkshell

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

const zkCliSh = "/usr/share/zookeeper/bin/zkCli.sh"

// stepMarker splits zkCli's output into one block per command: before each
// command the session runs `stat` on a node that does not exist, whose
// error line carries the step's number (as compat-tests/zkcli does).
const stepMarker = "Node does not exist: /zkshell-step-"

// zkCliBlocks runs the commands in one zkCli.sh session against addr and
// returns each command's output, normalized.
func zkCliBlocks(t *testing.T, addr string, commands []string) [][]string {
	t.Helper()
	var in strings.Builder
	for i, c := range commands {
		fmt.Fprintf(&in, "stat /zkshell-step-%d\n%s\n", i, c)
	}
	fmt.Fprintf(&in, "stat /zkshell-step-end\nquit\n")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkCliSh, "-server", addr)
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS=-Xmx256m")
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(in.String()), &out, &out
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		t.Fatalf("zkCli.sh did not finish: %v\n%s", err, out.String())
	}
	// The session's first event comes when it comes, sometimes after the
	// first marker; the shell under test does not print session events.
	text := strings.Replace(out.String(), "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n", "\n", 1)
	blocks := make([][]string, len(commands))
	cur := -1
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "SLF4J:") {
			continue
		}
		if tag, ok := strings.CutPrefix(line, stepMarker); ok {
			if cur, _ = strconv.Atoi(strings.TrimSpace(tag)); tag == "end" {
				cur = len(commands)
			}
			continue
		}
		if cur >= 0 && cur < len(commands) {
			blocks[cur] = append(blocks[cur], normalize(line))
		}
	}
	for i := range blocks {
		blocks[i] = trimEmpty(blocks[i])
	}
	return blocks
}

// TestShellMatchesZkCliOnApache runs the same scripts through Apache's
// zkCli.sh and through the shell against Apache ZooKeeper 3.8 and compares
// what each command prints.
func TestShellMatchesZkCliOnApache(t *testing.T) {
	if _, err := os.Stat(zkCliSh); err != nil {
		t.Fatalf("%s missing: apt-get install zookeeper", zkCliSh)
	}
	srv := zkserver.StartApache(t, zkserver.Options{ExtendedTypes: true})
	for _, path := range []string{filepath.Join("..", "..", "..", "compat-tests", "zkcli", "expected.txt"), filepath.Join("testdata", "more.txt"), filepath.Join("testdata", "quota.txt")} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			steps := loadScript(t, path)
			var commands []string
			for _, s := range steps {
				commands = append(commands, s.line)
			}
			blocks := zkCliBlocks(t, srv.Addr(), commands)
			for i := range steps {
				steps[i].want = blocks[i]
			}
			runScript(t, srv.Addr(), steps)
		})
	}
}
