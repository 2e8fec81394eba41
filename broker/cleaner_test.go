package broker

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestCleanerCheckpointFile: the checkpoint is Kafka's format (version 0,
// entry count, "topic partition offset" lines), read back as written; a
// missing file is empty, a damaged one an error.
func TestCleanerCheckpointFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), cleanerCheckpointName)
	if cp, err := readCleanerCheckpoint(path); err != nil || len(cp) != 0 {
		t.Fatalf("missing file: %v %v", cp, err)
	}
	want := map[string]int64{tpKey("a", 0): 17, tpKey("b.c", 3): 123456789}
	if err := writeCleanerCheckpoint(path, want); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b[:4]) != "0\n2\n" {
		t.Fatalf("file %q: not Kafka's checkpoint format", b)
	}
	got, err := readCleanerCheckpoint(path)
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("read back %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"1\n0\n", "0\n2\na 0 1\n", "0\n1\na x 1\n", "0\n1\na 0 -4\n"} {
		os.WriteFile(path, []byte(bad), 0o644)
		if _, err := readCleanerCheckpoint(path); err == nil {
			t.Fatalf("%q read without an error", bad)
		}
	}
}
