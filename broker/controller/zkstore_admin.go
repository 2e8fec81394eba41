package controller

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// ReassignPath is where tools older than KIP-455 ask for reassignments
// (kafka-reassign-partitions.sh --zookeeper): the controller starts the
// moves it names and takes each out as it completes (or is refused),
// deleting the znode when none remain.
const ReassignPath = "/admin/reassign_partitions"

// ReassignZNode is /admin/reassign_partitions.
type ReassignZNode struct {
	Version    int                 `json:"version"`
	Partitions []ReassignZNodeMove `json:"partitions"`
}

// ReassignZNodeMove is one partition's target there.
type ReassignZNodeMove struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Replicas  []int32  `json:"replicas"`
	LogDirs   []string `json:"log_dirs,omitempty"`
}

// TopicZNode is t as Kafka writes /brokers/topics/{t} (version 3, with
// the moves in progress).
func TopicZNode(t TopicWrite) []byte {
	z := zkmeta.TopicZNode{Version: 3, Partitions: map[string][]int32{}, AddingReplicas: map[string][]int32{},
		RemovingReplicas: map[string][]int32{}, TopicID: zkmeta.UUIDString(t.TopicID)}
	for p, r := range t.Replicas {
		z.Partitions[strconv.Itoa(p)] = nonNil(r)
	}
	for p, r := range t.Adding {
		z.AddingReplicas[strconv.Itoa(int(p))] = r
	}
	for p, r := range t.Removing {
		z.RemovingReplicas[strconv.Itoa(int(p))] = r
	}
	return zkmeta.MustJSON(z)
}

// ZKReassignments reads /admin/reassign_partitions (nil when absent).
func (s *ZKStore) ZKReassignments() ([]Reassign, error) {
	data, _, err := s.ZK.Get(ReassignPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var z ReassignZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return nil, err
	}
	out := make([]Reassign, 0, len(z.Partitions))
	for _, m := range z.Partitions {
		out = append(out, Reassign{Partition: PartitionID{m.Topic, m.Partition}, Target: nonNil(m.Replicas)})
	}
	return out, nil
}

// ReassignmentsDone takes ids out of /admin/reassign_partitions, fenced
// by /controller_epoch's version; the znode goes when none remain.
func (s *ZKStore) ReassignmentsDone(epochZkVersion int32, ids []PartitionID) error {
	data, st, err := s.ZK.Get(ReassignPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	var z ReassignZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return err
	}
	n := len(z.Partitions)
	z.Partitions = slices.DeleteFunc(z.Partitions, func(m ReassignZNodeMove) bool {
		return slices.Contains(ids, PartitionID{m.Topic, m.Partition})
	})
	if len(z.Partitions) == n {
		return nil
	}
	check := &zk.CheckVersionRequest{Path: "/controller_epoch", Version: epochZkVersion}
	if len(z.Partitions) == 0 {
		return s.ZK.Multi(check, &zk.DeleteRequest{Path: ReassignPath, Version: st.Version})
	}
	return s.ZK.Multi(check, &zk.SetDataRequest{Path: ReassignPath, Data: zkmeta.MustJSON(z), Version: st.Version})
}

// DeleteTopic deletes name's znodes once the controller epoch is checked
// (ZooKeeper has no recursive delete in one multi, so the check comes
// first, as Kafka's).
func (s *ZKStore) DeleteTopic(epochZkVersion int32, name string) error {
	if err := s.ZK.Multi(&zk.CheckVersionRequest{Path: "/controller_epoch", Version: epochZkVersion}); err != nil {
		if errors.Is(err, zk.ErrBadVersion) {
			return ErrFenced
		}
		return err
	}
	for _, p := range []string{zkmeta.TopicPath(name), zkmeta.TopicConfigPath(name), zkmeta.DeleteTopicPath(name)} {
		if err := s.ZK.DeleteRecursive(p); err != nil {
			return err
		}
	}
	return nil
}
