//go:build compat

// Package zkcli holds the zkCli.sh checks: zkcli_check.py (a scripted
// session against one server, checked against expected.txt) and
// quota_compat_test.go (the quota commands against Apache ZooKeeper 3.8
// and zkafka, outputs compared).
package zkcli

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

const zkCli = "/usr/share/zookeeper/bin/zkCli.sh"

// quotaScript exercises setquota / listquota / delquota with soft and hard
// limits, with zookeeper.enforceQuota=true: stats after creates, setData
// and deletes, soft overruns (accepted), hard overruns (QuotaExceeded),
// the limits and stats nodes themselves, and zkCli's refusals.
var quotaScript = []string{
	`create /q "abc"`,
	`create /q/a "12345"`,
	`setquota -n 3 /q`,
	`listquota /q`,
	`create /q/b "x"`,
	`create /q/c "x"`,
	`listquota /q`,
	`setquota -N 4 /q`,
	`listquota /q`,
	`create /q/d "x"`,
	`create /q/a/deep "x"`,
	`setquota -B 10 /q`,
	`set /q/a "123456"`,
	`set /q/a "1"`,
	`listquota /q`,
	`delete /q/c`,
	`listquota /q`,
	`create /q/c "ok"`,
	`get /zookeeper/quota/q/zookeeper_limits`,
	`get -s /zookeeper/quota/q/zookeeper_stats`,
	`ls /zookeeper/quota/q`,
	`delquota -n /q`,
	`listquota /q`,
	`delquota -N /q`,
	`create /q/e "x"`,
	`delquota /q`,
	`listquota /q`,
	`ls /zookeeper/quota`,
	`setquota -b 3 /q/a`,
	`listquota /q/a`,
	`setquota -n 2 /q`,
	`setquota -n 2 /nope`,
	`setquota -n 2 /zookeeper/quota/x`,
	`setquota -n 0 /q`,
	`set /q/a "1234"`,
	`listquota /q/a`,
	`delquota /q/a`,
	`delquota /q/a`,
	`listquota /q/a`,
	`ls /zookeeper/quota`,
}

const stepMark = "Node does not exist: /zkcli-quota-step-"

// TestQuotaApacheVsZkafka runs quotaScript through zkCli.sh against both
// servers and compares the output of every command.
func TestQuotaApacheVsZkafka(t *testing.T) {
	if _, err := os.Stat(zkCli); err != nil {
		t.Fatalf("%s missing: make compat installs it (apt-get install zookeeper)", zkCli)
	}
	opts := zkserver.Options{ExtraConfig: []string{"enforceQuota=true"}}
	apache := zkserver.StartApache(t, opts)
	want := runScript(t, apache.Addr(), quotaScript)
	apache.Stop()
	zkafka := zkserver.StartZkafka(t, opts)
	got := runScript(t, zkafka.Addr(), quotaScript)
	failed := 0
	for i, cmd := range quotaScript {
		if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
			failed++
			t.Errorf("%s\n  apache: %q\n  zkafka: %q", cmd, want[i], got[i])
		}
	}
	t.Logf("%d zkCli quota commands, %d differ", len(quotaScript), failed)
	// The soft overrun of "create /q/c" is logged, as ZooKeeper logs it.
	if w := "Quota exceeded: /q [current count=4, softCountLimit=3]"; !strings.Contains(zkafka.LogTail(1000), w) {
		t.Errorf("zkafka's log lacks %q", w)
	}
}

var (
	zxidLine = regexp.MustCompile(`^(cZxid|mZxid|pZxid) = 0x[0-9a-f]+$`)
	timeLine = regexp.MustCompile(`^(ctime|mtime) = .*$`)
)

// runScript runs commands in one zkCli.sh session and returns each one's
// output lines, split by a marker command between them, as zkcli_check.py
// does.
func runScript(t *testing.T, addr string, commands []string) [][]string {
	t.Helper()
	var in strings.Builder
	for i, c := range commands {
		fmt.Fprintf(&in, "stat /zkcli-quota-step-%d\n%s\n", i, c)
	}
	in.WriteString("stat /zkcli-quota-step-end\nquit\n")
	cmd := exec.Command("timeout", "-k", "5", "120", zkCli, "-server", addr)
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS=-Xmx256m")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("zkCli exit: %v", err)
	}
	blocks := make([][]string, len(commands))
	cur, ended := -1, false
	for _, line := range strings.Split(string(out), "\n") {
		if tag, ok := strings.CutPrefix(line, stepMark); ok {
			tag = strings.TrimSpace(tag)
			if tag == "end" {
				ended = true
				break
			}
			fmt.Sscan(tag, &cur)
			continue
		}
		if cur < 0 || strings.HasPrefix(line, "SLF4J:") || strings.TrimSpace(line) == "" {
			continue
		}
		line = zxidLine.ReplaceAllString(line, "$1 = 0xZXID")
		line = timeLine.ReplaceAllString(line, "$1 = TIME")
		blocks[cur] = append(blocks[cur], line)
	}
	if !ended {
		t.Fatalf("zkCli session against %s ended early:\n%s", addr, out)
	}
	return blocks
}
