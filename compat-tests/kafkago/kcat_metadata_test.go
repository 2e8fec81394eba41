//go:build compat

package kafkago

import (
	"slices"
	"testing"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// kcatList runs `kcat -L -J` against one broker for topic.
func kcatList(t *testing.T, addr, topic string) kafkaenv.KcatMetadata {
	t.Helper()
	m, out, err := kafkaenv.KcatList(addr, topic)
	if err != nil {
		t.Fatalf("kcat -L -J: %v\n%s", err, out)
	}
	return m
}

// TestKcatMetadata: `kcat -L` (librdkafka) against each of three brokers
// lists the three brokers and, for every partition of an RF 3 topic, the
// state znode's leader and ISR and the assigned replicas; after a broker
// stops, the others list two brokers and leaders on live brokers only.
func TestKcatMetadata(t *testing.T) {
	cl := kafkaenv.StartCluster(t, 3)
	createFullISR(t, cl, "kcatmeta", truthAssignment)
	check := func(live []int32) {
		t.Helper()
		for _, id := range live {
			e := cl.Broker(id)
			m := kcatList(t, e.Addr, "kcatmeta")
			var ids []int32
			for _, b := range m.Brokers {
				ids = append(ids, b.ID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, live) || len(m.Topics) != 1 || len(m.Topics[0].Partitions) != len(truthAssignment) {
				t.Fatalf("kcat -L via broker %d: %+v", id, m)
			}
			for _, p := range m.Topics[0].Partitions {
				s := stateOf(t, e, "kcatmeta", int(p.Partition))
				replicas, isr := p.ReplicaIDs(), p.ISRIDs()
				if p.Leader != s.Leader || !slices.Contains(live, p.Leader) || !slices.Equal(isr, s.ISR) ||
					!slices.Equal(replicas, truthAssignment[p.Partition]) {
					t.Fatalf("kcat -L via broker %d, partition %d: %+v, state %+v", id, p.Partition, p, s)
				}
			}
		}
	}
	check([]int32{1, 2, 3})
	cl.Broker(2).Stop()
	waitTruth(t, cl, []int32{1, 3}, "kcatmeta", truthAssignment)
	check([]int32{1, 3})
}
