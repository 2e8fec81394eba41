//go:build compat

// Package zkcli holds the zkCli.sh checks: zkcli_check.py (a scripted
// session against one server, checked against expected.txt) and
// quota_compat_test.go (the quota commands against Apache ZooKeeper 3.8
// and zkafka, outputs compared).
package zkcli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/compat-tests/zkserver"
)

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

// TestQuotaApacheVsZkafka runs quotaScript through zkCli.sh against both
// servers and compares the output of every command.
func TestQuotaApacheVsZkafka(t *testing.T) {
	opts := zkserver.Options{ExtraConfig: []string{"enforceQuota=true"}}
	apache := zkserver.StartApache(t, opts)
	want := zkserver.RunZkCli(t, apache.Addr(), quotaScript)
	apache.Stop()
	zkafka := zkserver.StartZkafka(t, opts)
	got := zkserver.RunZkCli(t, zkafka.Addr(), quotaScript)
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
