package kworkload

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
)

func TestMain(m *testing.M) { kcluster.Main(m) }

// run produces and consumes on topic for d and returns the checked
// history after a fresh read; between (if set) runs halfway; the consumer
// gets up to catchUp to read the last acknowledgements.
func run(t *testing.T, c *kcluster.Cluster, topic string, parts int32, d, catchUp time.Duration, between func()) Report {
	t.Helper()
	prod, err := StartProducer(c.Seeds(), topic, parts, 300)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prod.Stop(time.Second) })
	cons, err := StartConsumer(c.Seeds(), topic, parts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cons.Stop() })
	time.Sleep(d / 2)
	if between != nil {
		between()
	}
	time.Sleep(d / 2)
	if err := prod.Stop(30 * time.Second); err != nil {
		t.Logf("producer flush: %v", err)
	}
	// The consumer catches up with the last acknowledgements.
	acked := prod.Acks()
	kcluster.Poll(catchUp, func() bool {
		return cons.Count() >= len(acked)
	})
	seen := cons.Stop()
	final, err := ReadAll(c.Seeds(), topic, parts, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return Check(History{Acked: acked, Seen: seen, Final: final})
}

// TestWorkloadClean: an unreplicated topic on a healthy cluster keeps every
// acknowledged record, once, in order, and everything the consumer saw.
func TestWorkloadClean(t *testing.T) {
	c := kcluster.Start(t, kcluster.Options{RF: 1, MinISR: 1})
	c.CreateTopic("clean", 6, 1, nil)
	r := run(t, c, "clean", 6, 2*time.Second, 10*time.Second, nil)
	t.Logf("clean: %v", r)
	if !r.OK() || r.Acknowledged < 100 {
		t.Fatalf("%v\n%v", r, r.Problems)
	}
}

// TestWorkloadCatchesLoss: the checker sees acknowledged records lost when
// an unreplicated partition's leader is killed and comes back with an
// empty data directory (a loss the harness makes on purpose).
func TestWorkloadCatchesLoss(t *testing.T) {
	c := kcluster.Start(t, kcluster.Options{RF: 1, MinISR: 1})
	c.CreateTopic("loss", 6, 1, nil)
	victim := c.Leader("loss", 0)
	r := run(t, c, "loss", 6, 3*time.Second, 2*time.Second, func() {
		c.Kill9(victim)
		if err := os.RemoveAll(filepath.Join(c.Broker(victim).Dir, "logs")); err != nil {
			t.Fatal(err)
		}
		c.Restart(victim)
	})
	t.Logf("loss: %v", r)
	if r.Lost == 0 || r.Vanished == 0 {
		t.Fatalf("an emptied leader lost nothing the checker saw: %v", r)
	}
}
