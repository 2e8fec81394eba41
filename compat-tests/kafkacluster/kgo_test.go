//go:build compat

package kafkacluster

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
)

// kgoTests are the tests of franz-go's pkg/kgo that talk to a cluster
// (through KGO_SEEDS) and need nothing zkafka lacks (no transactions, no
// share groups, no SASL): produce, consume, groups, regex consumption,
// partition changes and purges. KGO_RUN replaces the list. Left out:
// TestTxnEtl and the share, SASL and 848 tests.
var kgoTests = []string{
	"TestGroupETL", "TestGroupSimple", "TestClient_Produce", "TestClient_ProduceLargeMessages",
	"TestConsumeTopicRetrieval", "TestDirectPartitionPurge", "TestAddRemovePartitions",
	"TestIssue325", "TestIssue337", "TestIssue434", "TestIssue523", "TestIssue648", "TestIssue810",
	"TestIssue865", "TestPauseIssue489", "TestPing", "TestConsumeRegex",
}

// TestKgoIntegration runs franz-go's own kgo integration tests, from the
// module cache at the version go.mod requires, against the cluster with
// KGO_TEST_RF (topics of replication factor 3).
func TestKgoIntegration(t *testing.T) {
	n := rf(t)
	c := start(t, n)
	root, err := benchkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	runRE := "^(" + strings.Join(kgoTests, "|") + ")$"
	if s := os.Getenv("KGO_RUN"); s != "" {
		runRE = s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-timeout", "10m", "-run", runRE, "github.com/twmb/franz-go/pkg/kgo")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KGO_SEEDS="+strings.Join(c.Seeds(), ","), "KGO_TEST_RF="+strconv.Itoa(n),
		"KGO_TEST_RECORDS=20000", "KGO_LOG_LEVEL=none")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kgo integration tests (-run %s) against %v, RF %d: %v\n%s", runRE, c.Seeds(), n, err, tail(string(out), 60))
	}
	t.Log(tail(string(out), 3))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
