//go:build compat

package racks

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// TestKcatClientRack: librdkafka (kcat) with client.rack=b reads a
// partition led by broker 1 (rack a) from broker 2 (rack b): the
// brokers' request hook counts kcat's Fetch requests per broker.
func TestKcatClientRack(t *testing.T) {
	var mu sync.Mutex
	fetches := map[int32]int{}
	hook := func(info broker.RequestInfo) broker.RequestAction {
		if info.Key == 1 && info.ClientID == "rdkafka" {
			mu.Lock()
			fetches[info.Broker]++
			mu.Unlock()
		}
		return broker.RequestAction{}
	}
	cl := kafkaenv.StartCluster(t, 3, withRacks("a", "b", "c"), kafkaenv.Configure(func(c *broker.Config) {
		c.Replication.ReplicaSelector = broker.RackAwareReplicaSelector
		c.RequestHook = hook
	}))
	createAssigned(t, cl, "near", [][]int32{{1, 2, 3}}, nil)
	waitTopic(t, cl, "near", 1, func(pd kadm.PartitionDetail) bool { return len(pd.ISR) == 3 })
	produceN(t, cl, "near", "k", 300)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "kcat", "-C", "-b", strings.Join(cl.Seeds(), ","), "-t", "near", "-p", "0",
		"-o", "beginning", "-c", "300", "-q", "-f", "%s\n", "-X", "client.rack=b").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 300 || lines[0] != "k-0" || lines[299] != "k-299" {
		t.Fatalf("kcat read %d records: first %q last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	mu.Lock()
	defer mu.Unlock()
	if fetches[2] == 0 {
		t.Fatalf("kcat's fetches by broker: %v, none to broker 2 (rack b)", fetches)
	}
	t.Logf("kcat's fetches by broker: %v", fetches)
}
