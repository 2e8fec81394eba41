package kafkaenv

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"time"
)

// KcatMetadata is the part of `kcat -L -J` (librdkafka's view of the
// cluster) the tests check.
type KcatMetadata struct {
	Brokers []struct {
		ID int32 `json:"id"`
	} `json:"brokers"`
	Topics []struct {
		Topic      string          `json:"topic"`
		Partitions []KcatPartition `json:"partitions"`
	} `json:"topics"`
}

// KcatPartition is one partition of a topic in `kcat -L -J`.
type KcatPartition struct {
	Partition int32 `json:"partition"`
	Leader    int32 `json:"leader"`
	Replicas  []struct {
		ID int32 `json:"id"`
	} `json:"replicas"`
	ISRs []struct {
		ID int32 `json:"id"`
	} `json:"isrs"`
}

// ReplicaIDs are p's replicas in kcat's order.
func (p KcatPartition) ReplicaIDs() []int32 {
	var ids []int32
	for _, r := range p.Replicas {
		ids = append(ids, r.ID)
	}
	return ids
}

// ISRIDs are p's in-sync replicas in kcat's order.
func (p KcatPartition) ISRIDs() []int32 {
	var ids []int32
	for _, r := range p.ISRs {
		ids = append(ids, r.ID)
	}
	return ids
}

// KcatList runs `kcat -L -J` against the broker at addr for topic (30 s
// at most) and parses what it lists; out is kcat's output, its standard
// error after it when kcat failed, for messages.
func KcatList(addr, topic string) (m KcatMetadata, out []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err = exec.CommandContext(ctx, "kcat", "-L", "-J", "-b", addr, "-t", topic).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			out = append(out, ee.Stderr...)
		}
		return m, out, err
	}
	err = json.Unmarshal(out, &m)
	return m, out, err
}
