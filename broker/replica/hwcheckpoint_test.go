package replica

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHighWatermarkCheckpoint: Kafka's replication-offset-checkpoint
// text, sorted, read back; a missing file is empty, a bad one an error.
func TestHighWatermarkCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if m, err := ReadHighWatermarks(dir); err != nil || len(m) != 0 {
		t.Fatalf("missing file: %v %v", m, err)
	}
	want := map[TopicPartition]int64{{"b", 1}: 7, {"a", 10}: 0, {"a", 2}: 123456789012}
	if err := WriteHighWatermarks(dir, want); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, HighWatermarkFile))
	if string(data) != "0\n3\na 2 123456789012\na 10 0\nb 1 7\n" {
		t.Fatalf("file %q", data)
	}
	got, err := ReadHighWatermarks(dir)
	if err != nil || len(got) != 3 || got[TopicPartition{"a", 2}] != 123456789012 {
		t.Fatalf("read back %v %v", got, err)
	}
	for _, bad := range []string{"1\n0\n", "0\n2\na 1 1\n", "0\n1\na x 1\n"} {
		os.WriteFile(filepath.Join(dir, HighWatermarkFile), []byte(bad), 0o644)
		if _, err := ReadHighWatermarks(dir); err == nil {
			t.Errorf("%q read without error", bad)
		}
	}
}
