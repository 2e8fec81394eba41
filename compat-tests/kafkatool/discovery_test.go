package kafkatool

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestProduceFollowsBrokersInZooKeeper: a producer that found the broker
// through ZooKeeper keeps producing when the broker comes back on another
// port, because it follows /brokers/ids (its seed list was the old port).
func TestProduceFollowsBrokersInZooKeeper(t *testing.T) {
	e := startEnv(t)
	run(t, "", "topics", "create", "moving", "--partitions", "1", "--bootstrap-server", e.Addr)
	r, w := io.Pipe()
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() {
		_, err := runIn(kafkaenv.Context(t, 60*time.Second), r, &out, "produce", "moving", "--zookeeper", zkSpec(e), "--timeout", "40s")
		done <- err
	}()
	io.WriteString(w, "before\n")
	checkFor(t, 20*time.Second, "the first record written", func() bool {
		return strings.Contains(run(t, "", "consume", "moving", "--from", "beginning", "--until-end", "--bootstrap-server", e.Addr), "before")
	})
	old := e.Addr
	e.Move()
	if e.Addr == old {
		t.Fatalf("the broker came back on the same address %s", old)
	}
	io.WriteString(w, "after\n")
	w.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("produce across the broker's move: %v", err)
		}
	case <-time.After(50 * time.Second):
		t.Fatal("produce did not finish")
	}
	got := run(t, "", "consume", "moving", "--from", "beginning", "--until-end", "--bootstrap-server", e.Addr)
	if got != "before\nafter\n" {
		t.Errorf("topic holds %q", got)
	}
}
