package kafkatool

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestProduceConsume writes keyed records with headers and reads them
// back: each key is on the partition Kafka's Java producer would choose
// (franz-go's StickyKeyPartitioner(nil) is that murmur2 placement).
func TestProduceConsume(t *testing.T) {
	e := startEnv(t)
	bs := []string{"--bootstrap-server", e.Addr}
	run(t, "", append([]string{"topics", "create", "events", "--partitions", "4"}, bs...)...)
	var in strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&in, "user-%d:value %d\n", i, i)
	}
	sum := decode[struct {
		Records    int64           `json:"records"`
		Partitions map[int32]int64 `json:"partitions"`
	}](t, run(t, in.String(), append([]string{"produce", "events", "--key-separator", ":", "--header", "src=test",
		"--compression", "lz4", "-o", "json"}, bs...)...))
	if sum.Records != 40 || len(sum.Partitions) < 2 {
		t.Fatalf("produce summary %+v", sum)
	}
	out := run(t, "", append([]string{"consume", "events", "--from", "beginning", "--until-end", "--format", `%k|%p|%h|%s\n`}, bs...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 40 {
		t.Fatalf("consumed %d records:\n%s", len(lines), out)
	}
	java := kgo.StickyKeyPartitioner(nil).ForTopic("events")
	for _, l := range lines {
		f := strings.Split(l, "|")
		if len(f) != 4 || f[2] != "src=test" || !strings.HasPrefix(f[3], "value ") {
			t.Fatalf("record %q", l)
		}
		if want := fmt.Sprint(java.Partition(&kgo.Record{Key: []byte(f[0])}, 4)); f[1] != want {
			t.Errorf("key %s on partition %s, the Java producer puts it on %s", f[0], f[1], want)
		}
	}
	// Brokers found through ZooKeeper; an explicit partition; --count.
	run(t, "a\nb\nc\n", "produce", "events", "--zookeeper", zkSpec(e), "--partition", "2", "--acks", "1")
	got := run(t, "", append([]string{"consume", "events", "--partition", "2", "--from", "beginning", "--until-end", "--format", `%s\n`}, bs...)...)
	if !strings.HasSuffix(got, "a\nb\nc\n") {
		t.Errorf("partition 2 ends with %q", got)
	}
	if got := run(t, "", append([]string{"consume", "events", "--from", "beginning", "--count", "3", "-o", "json"}, bs...)...); strings.Count(got, "\n") != 3 || !strings.Contains(got, `"topic":"events"`) {
		t.Errorf("--count 3 -o json:\n%s", got)
	}
	// --file instead of stdin.
	file := t.TempDir() + "/records.txt"
	if err := os.WriteFile(file, []byte("from-file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "", append([]string{"produce", "events", "--file", file, "--partition", "3"}, bs...)...)
	if got := run(t, "", append([]string{"consume", "events", "--partition", "3", "--from", "beginning", "--until-end"}, bs...)...); !strings.HasSuffix(got, "from-file\n") {
		t.Errorf("partition 3 after --file: %q", got)
	}
	// Round-robin ignores keys: 8 records over 4 partitions, 2 each.
	sum2 := decode[struct {
		Partitions map[int32]int64 `json:"partitions"`
	}](t, run(t, "k:1\nk:2\nk:3\nk:4\nk:5\nk:6\nk:7\nk:8\n", append([]string{"produce", "events", "--key-separator", ":",
		"--partitioner", "round-robin", "-o", "json"}, bs...)...))
	for p := int32(0); p < 4; p++ {
		if sum2.Partitions[p] != 2 {
			t.Errorf("round-robin: %v", sum2.Partitions)
			break
		}
	}
	// --from an offset and a timestamp on one partition.
	if got := run(t, "", append([]string{"consume", "events", "--partition", "2", "--from", "1", "--until-end", "--format", `%o `}, bs...)...); !strings.HasPrefix(got, "1 2 ") {
		t.Errorf("--from 1: %q", got)
	}
	if got := run(t, "", append([]string{"consume", "events", "--from", "@4102444800000", "--until-end"}, bs...)...); got != "" {
		t.Errorf("--from a time after every record: %q", got)
	}
	if got := run(t, "", append([]string{"consume", "events", "--partition", "2", "--from", "@0", "--until-end", "--format", `%o `}, bs...)...); !strings.HasPrefix(got, "0 1 ") {
		t.Errorf("--from @0: %q", got)
	}
	if err := runErr(t, append([]string{"produce", "events", "--acks", "0", "--idempotence"}, bs...)...); !strings.Contains(err.Error(), "--idempotence") {
		t.Errorf("--acks 0 --idempotence: %v", err)
	}
	if err := runErr(t, append([]string{"consume", "events", "--format", "%x"}, bs...)...); !strings.Contains(err.Error(), "%x") {
		t.Errorf("bad --format: %v", err)
	}
}

// TestGroups consumes with a group, then lists, describes, resets and
// deletes it.
func TestGroups(t *testing.T) {
	e := startEnv(t)
	bs := []string{"--bootstrap-server", e.Addr}
	run(t, "", append([]string{"topics", "create", "g-topic", "--partitions", "2"}, bs...)...)
	run(t, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", append([]string{"produce", "g-topic", "--partitioner", "round-robin"}, bs...)...)
	run(t, "", append([]string{"consume", "g-topic", "--group", "g1", "--from", "beginning", "--count", "4"}, bs...)...)
	if out := run(t, "", append([]string{"groups", "list"}, bs...)...); !strings.Contains(out, "g1") {
		t.Fatalf("groups list:\n%s", out)
	}
	type desc struct {
		Group      string `json:"group"`
		TotalLag   int64  `json:"total_lag"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Committed int64 `json:"committed"`
			End       int64 `json:"end"`
			Lag       int64 `json:"lag"`
		} `json:"partitions"`
	}
	d := decode[[]desc](t, run(t, "", append([]string{"groups", "describe", "g1", "-o", "json"}, bs...)...))
	if len(d) != 1 || d[0].TotalLag != 6 || len(d[0].Partitions) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	// Dry run: prints the plan, commits nothing.
	plan := run(t, "", append([]string{"groups", "reset-offsets", "g1", "--to-earliest"}, bs...)...)
	if !strings.Contains(plan, "dry run") {
		t.Errorf("dry run output:\n%s", plan)
	}
	if d := decode[[]desc](t, run(t, "", append([]string{"groups", "describe", "g1", "-o", "json"}, bs...)...)); d[0].TotalLag != 6 {
		t.Errorf("a dry run changed the lag to %d", d[0].TotalLag)
	}
	run(t, "", append([]string{"groups", "reset-offsets", "g1", "--to-latest", "--execute"}, bs...)...)
	if d := decode[[]desc](t, run(t, "", append([]string{"groups", "describe", "g1", "-o", "json"}, bs...)...)); d[0].TotalLag != 0 {
		t.Errorf("after --to-latest --execute: lag %d", d[0].TotalLag)
	}
	run(t, "", append([]string{"groups", "reset-offsets", "g1", "--shift-by", "-2", "--execute"}, bs...)...)
	if d := decode[[]desc](t, run(t, "", append([]string{"groups", "describe", "g1", "-o", "json"}, bs...)...)); d[0].TotalLag != 4 {
		t.Errorf("after --shift-by -2 on 2 partitions: lag %d", d[0].TotalLag)
	}
	run(t, "", append([]string{"groups", "reset-offsets", "g1", "--to-offset", "1", "--execute"}, bs...)...)
	if d := decode[[]desc](t, run(t, "", append([]string{"groups", "describe", "g1", "-o", "json"}, bs...)...)); d[0].TotalLag != 8 {
		t.Errorf("after --to-offset 1: lag %d", d[0].TotalLag)
	}
	if err := runErr(t, append([]string{"groups", "reset-offsets", "g1"}, bs...)...); !strings.Contains(err.Error(), "exactly one") {
		t.Errorf("no reset target: %v", err)
	}
	run(t, "", append([]string{"groups", "delete", "g1"}, bs...)...)
	if err := runErr(t, append([]string{"groups", "describe", "g1"}, bs...)...); !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("describing a deleted group: %v", err)
	}
	if out := run(t, "", append([]string{"groups", "list"}, bs...)...); strings.Contains(out, "g1") {
		t.Errorf("g1 listed after delete:\n%s", out)
	}
}
