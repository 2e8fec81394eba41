//go:build compat

package kafkacluster

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestClients: kcat, kafka-python and confluent-kafka against the cluster.
func TestClients(t *testing.T) {
	n := rf(t)
	c := start(t, n)
	bootstrap := strings.Join(c.Seeds(), ",")
	t.Run("kcat", func(t *testing.T) { kcat(t, bootstrap, n) })
	for _, client := range []string{"kafka-python", "confluent-kafka"} {
		t.Run(client, func(t *testing.T) {
			out, err := run(t, nil, "/usr/bin/python3", "cluster_check.py", client, bootstrap, strconv.Itoa(n))
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Log(strings.TrimSpace(out))
		})
	}
}

// run runs a command bounded to two minutes and returns its combined
// output.
func run(t *testing.T, stdin []byte, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kcat: produce with acks=all to an auto-created topic (num.partitions 3,
// default.replication.factor n), list its metadata (three brokers, n
// replicas all in the ISR) and consume everything back.
func kcat(t *testing.T, bootstrap string, n int) {
	topic := fmt.Sprintf("kcat-%d", time.Now().UnixNano())
	var in bytes.Buffer
	want := map[string]bool{}
	for i := range 100 {
		fmt.Fprintf(&in, "k%d:v%d\n", i, i)
		want[fmt.Sprintf("k%d:v%d", i, i)] = true
	}
	if out, err := run(t, in.Bytes(), "kcat", "-P", "-b", bootstrap, "-t", topic, "-K:", "-X", "acks=all", "-X", "message.timeout.ms=30000"); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	var md kafkaenv.KcatMetadata
	deadline := time.Now().Add(30 * time.Second)
	for {
		var out []byte
		var err error
		md, out, err = kafkaenv.KcatList(bootstrap, topic)
		problem := metadataProblem(md, topic, n)
		if err == nil && problem == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kcat -L: %v %s\n%s", err, problem, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	out, err := run(t, nil, "kcat", "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k:%s\n")
	if err != nil {
		t.Fatalf("kcat -C: %v\n%s", err, out)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if got[l] {
			t.Fatalf("kcat -C read %q twice", l)
		}
		got[l] = true
	}
	if len(got) != len(want) {
		t.Fatalf("kcat -C read %d distinct records, produced %d", len(got), len(want))
	}
	for k := range want {
		if !got[k] {
			t.Fatalf("kcat -C did not read %q", k)
		}
	}
	t.Logf("kcat: 100 records acks=all, %d brokers, %d partitions with %d replicas in the ISR", len(md.Brokers), len(md.Topics[0].Partitions), n)
}

func metadataProblem(md kafkaenv.KcatMetadata, topic string, n int) string {
	if len(md.Brokers) != 3 {
		return fmt.Sprintf("%d brokers, want 3", len(md.Brokers))
	}
	if len(md.Topics) != 1 || md.Topics[0].Topic != topic || len(md.Topics[0].Partitions) != 3 {
		return "topic or its 3 partitions missing"
	}
	for _, p := range md.Topics[0].Partitions {
		reps, isr := p.ReplicaIDs(), p.ISRIDs()
		slices.Sort(reps)
		slices.Sort(isr)
		if len(reps) != n || !slices.Equal(reps, isr) || !slices.Contains(reps, p.Leader) {
			return fmt.Sprintf("partition %d: leader %d replicas %v isr %v, want %d replicas all in the ISR", p.Partition, p.Leader, reps, isr, n)
		}
	}
	return ""
}
