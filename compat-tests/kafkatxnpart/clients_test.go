//go:build compat

package kafkatxnpart

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// kcatConsume reads topic from the beginning to the end with kcat
// (librdkafka) at isolation.level and returns the values, one a line.
func kcatConsume(t *testing.T, addr, topic, isolation string) []string {
	t.Helper()
	cmd := exec.Command("kcat", "-C", "-b", addr, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
		"-f", "%s\n", "-X", "isolation.level="+isolation)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("kcat did not reach the end in 30 s: %s", out)
	}
	if err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestKcatReadCommitted: kcat with isolation.level=read_committed reads
// the committed transaction only, up to the LSO (the open transaction
// holds the rest back); read_uncommitted reads every record.
func TestKcatReadCommitted(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(unverified))
	if _, err := e.Admin().CreateTopic(ctxT(t), 1, 1, nil, "kc"); err != nil {
		t.Fatal(err)
	}
	txnScenario(t, clientish{direct(t, e.Addr)}, "kc")
	if got := kcatConsume(t, e.Addr, "kc", "read_committed"); strings.Join(got, " ") != "a1 a2 a3" {
		t.Fatalf("kcat read_committed: %q, want a1 a2 a3", got)
	}
	if got := kcatConsume(t, e.Addr, "kc", "read_uncommitted"); strings.Join(got, " ") != "a1 a2 a3 b1 b2 c1 c2" {
		t.Fatalf("kcat read_uncommitted: %q, want every record", got)
	}
}

// TestConfluentTransactions runs confluent_txn_check.py (librdkafka's
// transactional producer and read_committed consumer) against a broker
// with the transaction coordinator and KIP-890 verification on.
func TestConfluentTransactions(t *testing.T) {
	e := kafkaenv.Start(t)
	cmd := exec.Command("/usr/bin/python3", "confluent_txn_check.py", e.Addr)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("confluent_txn_check.py did not finish in 120 s:\n%s", out)
	}
	if err != nil {
		t.Fatalf("confluent_txn_check.py: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
