//go:build compat

package kafkacluster

import (
	"os"
	"strconv"
	"testing"

	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
)

func TestMain(m *testing.M) { kcluster.Main(m) }

// rf is ZKAFKA_CLUSTER_RF (default 3): the topics' replication factor,
// with min.insync.replicas 2 for RF 3 and 1 below.
func rf(t *testing.T) int {
	s := os.Getenv("ZKAFKA_CLUSTER_RF")
	if s == "" {
		return 3
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 3 {
		t.Fatalf("ZKAFKA_CLUSTER_RF=%q: want 1..3", s)
	}
	return n
}

// start starts the 3-broker cluster for replication factor n.
func start(t *testing.T, n int) *kcluster.Cluster {
	return kcluster.Start(t, kcluster.Options{RF: n, MinISR: min(n, 2), Props: map[string]string{
		"auto.create.topics.enable": "true", "num.partitions": "3"}})
}
