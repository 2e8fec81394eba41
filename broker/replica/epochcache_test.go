package replica

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestEndOffsetFor(t *testing.T) {
	c := &EpochCache{entries: []EpochEntry{{2, 0}, {4, 10}, {7, 25}}}
	for _, tc := range []struct {
		requested int32
		want      string
	}{
		{-1, "-1 -1"},
		{7, "7 40"},  // the latest: the log end
		{4, "4 25"},  // where the next epoch starts
		{5, "4 25"},  // between: the largest epoch below, the next start
		{1, "1 0"},   // below the first: itself, the first start
		{9, "-1 -1"}, // above every epoch
	} {
		e, o := c.EndOffsetFor(tc.requested, 40)
		if got := fmt.Sprint(e, o); got != tc.want {
			t.Errorf("EndOffsetFor(%d) = %s, want %s", tc.requested, got, tc.want)
		}
	}
}

func TestAssignAndTruncate(t *testing.T) {
	dir := t.TempDir()
	c, err := OpenEpochCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		op   string
		a    int64
		b    int64
		want string
	}{
		{"assign", 0, 0, "[{0 0}]"},
		{"assign", 0, 5, "[{0 0}]"},          // not a newer epoch
		{"assign", 3, 12, "[{0 0} {3 12}]"},  //
		{"assign", 4, 12, "[{0 0} {4 12}]"},  // nothing written under 3: 4 replaces it
		{"truncate", 12, 0, "[{0 0}]"},       // the log was cut back to 12
		{"assign", 5, 9, "[{0 0} {5 9}]"},    //
		{"truncate", 20, 0, "[{0 0} {5 9}]"}, // nothing after 20
	}
	for _, s := range steps {
		switch s.op {
		case "assign":
			err = c.Assign(int32(s.a), s.b)
		case "truncate":
			err = c.TruncateFromEnd(s.a)
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(c.Entries()); got != s.want {
			t.Fatalf("%s %d %d: %s, want %s", s.op, s.a, s.b, got, s.want)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, CheckpointName))
	if err != nil || string(data) != "0\n2\n0 0\n5 9\n" {
		t.Fatalf("checkpoint file %q (%v)", data, err)
	}
	re, err := OpenEpochCache(dir)
	if err != nil || fmt.Sprint(re.Entries()) != "[{0 0} {5 9}]" {
		t.Fatalf("reopened: %v %v", re.Entries(), err)
	}
}

func TestParseCheckpointRejects(t *testing.T) {
	for _, s := range []string{"", "1\n0\n", "0\n2\n0 0\n", "0\n1\nx 0\n", "0\n2\n3 5\n2 9\n", "0\n1\n0 0\n1 1\n"} {
		if _, err := parseCheckpoint(s); err == nil {
			t.Errorf("parseCheckpoint(%q) accepted", s)
		}
	}
}
