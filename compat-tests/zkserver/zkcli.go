package zkserver

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// ZkCli is Apache ZooKeeper's command-line client (Debian's package).
const ZkCli = "/usr/share/zookeeper/bin/zkCli.sh"

const zkCliMark = "Node does not exist: /zkcli-script-step-"

// zkCliLostMark is the marker command's answer when the connection was
// lost under it (Apache ZooKeeper drops clients when a reconfig changes
// the voters); the marker still splits the output.
const zkCliLostMark = "KeeperErrorCode = ConnectionLoss for /zkcli-script-step-"

var (
	zkCliZxid = regexp.MustCompile(`^(cZxid|mZxid|pZxid) = 0x[0-9a-f]+$`)
	zkCliTime = regexp.MustCompile(`^(ctime|mtime) = .*$`)
)

// RunZkCli runs commands in one `zkCli.sh -server addr` session, fed on
// stdin, and returns each command's output lines (blank and SLF4J lines
// dropped, zxids and times masked, and the client's notices of a lost and
// regained connection dropped). A marker command between two commands
// splits the output, as compat-tests/zkcli/zkcli_check.py does.
func RunZkCli(t testing.TB, addr string, commands []string) [][]string {
	t.Helper()
	return RunZkCliFlags(t, addr, "", commands)
}

// RunZkCliFlags is RunZkCli with JVM flags added to CLIENT_JVMFLAGS (such
// as -Djava.security.auth.login.config=FILE for SASL).
func RunZkCliFlags(t testing.TB, addr, jvmFlags string, commands []string) [][]string {
	t.Helper()
	if _, err := os.Stat(ZkCli); err != nil {
		t.Fatalf("%s missing: %s", ZkCli, installHint)
	}
	var in strings.Builder
	for i, c := range commands {
		fmt.Fprintf(&in, "stat /zkcli-script-step-%d\n%s\n", i, c)
	}
	in.WriteString("stat /zkcli-script-step-end\nquit\n")
	cmd := exec.Command("timeout", "-k", "5", "120", ZkCli, "-server", addr)
	cmd.Env = append(os.Environ(), strings.TrimSpace("CLIENT_JVMFLAGS=-Xmx256m "+jvmFlags))
	cmd.Stdin = strings.NewReader(in.String())
	out, _ := cmd.CombinedOutput() // zkCli exits 1 after quit
	blocks := make([][]string, len(commands))
	cur, ended := -1, false
	for _, line := range strings.Split(string(out), "\n") {
		tag, ok := strings.CutPrefix(line, zkCliMark)
		if !ok {
			tag, ok = strings.CutPrefix(line, zkCliLostMark)
		}
		if ok {
			if tag = strings.TrimSpace(tag); tag == "end" {
				ended = true
				break
			}
			fmt.Sscan(tag, &cur)
			continue
		}
		if cur < 0 || strings.HasPrefix(line, "SLF4J:") || strings.TrimSpace(line) == "" || reconnectNoise(line) {
			continue
		}
		line = zkCliZxid.ReplaceAllString(line, "$1 = 0xZXID")
		line = zkCliTime.ReplaceAllString(line, "$1 = TIME")
		blocks[cur] = append(blocks[cur], line)
	}
	if !ended {
		t.Fatalf("zkCli session against %s ended early:\n%s", addr, out)
	}
	return blocks
}

// reconnectNoise is what the client prints when its connection goes and
// comes back: not the answer of a command.
func reconnectNoise(line string) bool {
	return line == "WATCHER::" || strings.HasPrefix(line, "WatchedEvent state:")
}
