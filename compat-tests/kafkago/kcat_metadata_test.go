//go:build compat

package kafkago

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

// kcatMetadata is the part of `kcat -L -J` this test reads.
type kcatMetadata struct {
	Brokers []struct {
		ID int32 `json:"id"`
	} `json:"brokers"`
	Topics []struct {
		Topic      string `json:"topic"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Leader    int32 `json:"leader"`
			Replicas  []struct {
				ID int32 `json:"id"`
			} `json:"replicas"`
			ISRs []struct {
				ID int32 `json:"id"`
			} `json:"isrs"`
		} `json:"partitions"`
	} `json:"topics"`
}

// kcatList runs `kcat -L -J` against one broker for topic.
func kcatList(t *testing.T, addr, topic string) kcatMetadata {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "kcat", "-L", "-J", "-b", addr, "-t", topic).Output()
	if err != nil {
		t.Fatalf("kcat -L: %v\n%s", err, out)
	}
	var m kcatMetadata
	if err := json.Unmarshal(out, &m); err != nil {
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
				var replicas, isr []int32
				for _, r := range p.Replicas {
					replicas = append(replicas, r.ID)
				}
				for _, r := range p.ISRs {
					isr = append(isr, r.ID)
				}
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
