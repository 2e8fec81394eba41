package kafkatxnpart

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// partitionFiles reads dir's files whose name ends with suffix.
func partitionFiles(t *testing.T, dir, suffix string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = b
		}
	}
	return out
}

// TestRestartKeepsTransactions: after a clean restart (producer snapshot
// at the log end), and after one that lost the snapshots and the
// .txnindex files (what a crash before their fsync leaves), the broker
// has the same open transaction (LSO), the same .txnindex bytes and the
// same aborted transactions, rebuilt from the log's batches and markers.
func TestRestartKeepsTransactions(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(unverified))
	if _, err := e.Admin().CreateTopic(ctxT(t), 1, 1, nil, "rs"); err != nil {
		t.Fatal(err)
	}
	a, b, epochA, _ := txnScenario(t, clientish{direct(t, e.Addr)}, "rs")
	dir := filepath.Join(e.Config.LogDirs[0], "rs-0")
	idx := partitionFiles(t, dir, ".txnindex")
	if len(idx["00000000000000000000.txnindex"]) != 34 {
		t.Fatalf(".txnindex files %v: want one entry in 00000000000000000000.txnindex", idx)
	}
	check := func(when string) {
		t.Helper()
		cl := direct(t, e.Addr)
		if lso := latest(t, cl, "rs", 0, 1); lso != 7 {
			t.Fatalf("%s: LSO %d, want 7", when, lso)
		}
		f := fetchCommitted(t, cl, "rs", 0, 0)
		if len(f.AbortedTransactions) != 1 || f.AbortedTransactions[0].ProducerID != b || f.AbortedTransactions[0].FirstOffset != 4 {
			t.Fatalf("%s: aborted transactions %+v", when, f.AbortedTransactions)
		}
		if got := partitionFiles(t, dir, ".txnindex"); len(got) != len(idx) || !slices.Equal(got["00000000000000000000.txnindex"], idx["00000000000000000000.txnindex"]) {
			t.Fatalf("%s: .txnindex files %v, want %v", when, got, idx)
		}
	}
	e.Restart()
	check("after a clean restart")
	if snaps := partitionFiles(t, dir, ".snapshot"); len(snaps) == 0 {
		t.Fatal("no producer snapshot after a clean shutdown")
	}

	e.Stop()
	for name := range partitionFiles(t, dir, ".snapshot") {
		os.Remove(filepath.Join(dir, name))
	}
	for name := range partitionFiles(t, dir, ".txnindex") {
		os.Remove(filepath.Join(dir, name))
	}
	e.Start()
	check("after losing the snapshots and .txnindex files")

	// The open transaction is still a's: its commit moves the LSO.
	cl := direct(t, e.Addr)
	if code := marker(t, cl, "rs", 0, a, epochA, 0, true); code != 0 {
		t.Fatalf("COMMIT after the restarts: %d", code)
	}
	if lso := latest(t, cl, "rs", 0, 1); lso != 10 {
		t.Fatalf("LSO after the commit: %d, want 10", lso)
	}
	if got := consumeCommitted(t, []string{e.Addr}, "rs", 5); !slices.Equal(got, []string{"a1", "a2", "a3", "c1", "c2"}) {
		t.Fatalf("read_committed consumer got %q", got)
	}
}
