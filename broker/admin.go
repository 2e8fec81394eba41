package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/controller"
	"github.com/zkafka/zkafka/broker/zkmeta"
	"github.com/zkafka/zkafka/kproto"
)

// Topic administration shared by CreateTopics, Metadata auto-creation,
// DeleteTopics and CreatePartitions. Writes go to ZooKeeper in Kafka's
// layout (AdminZkClient): /config/topics/{t} then /brokers/topics/{t}; the
// controller adds the partition states. When this broker is the
// controller it writes all of them in one epoch-checked multi, so a topic
// is usable as soon as the request returns.

// adminError is a request-level failure with Kafka's code and message.
type adminError struct {
	code kproto.ErrorCode
	msg  string
}

func (e *adminError) Error() string { return e.msg }

func adminErr(code kproto.ErrorCode, format string, args ...any) *adminError {
	return &adminError{code: code, msg: fmt.Sprintf(format, args...)}
}

// codeOf maps an error to its code and message (UNKNOWN_SERVER_ERROR for
// anything that is not an *adminError).
func codeOf(err error) (kproto.ErrorCode, *string) {
	if err == nil {
		return kproto.CodeNone, nil
	}
	msg := err.Error()
	var ae *adminError
	if errors.As(err, &ae) {
		return ae.code, &msg
	}
	return kproto.CodeUnknownServerError, &msg
}

const maxTopicNameLen = 249

// validateTopicName applies Kafka's Topic.validate.
func validateTopicName(name string) *adminError {
	switch {
	case name == "":
		return adminErr(kproto.CodeInvalidTopicException, "Topic name is illegal, it can't be empty")
	case name == "." || name == "..":
		return adminErr(kproto.CodeInvalidTopicException, "Topic name cannot be \".\" or \"..\"")
	case len(name) > maxTopicNameLen:
		return adminErr(kproto.CodeInvalidTopicException, "Topic name is illegal, it can't be longer than %d characters, topic name: %s", maxTopicNameLen, name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return adminErr(kproto.CodeInvalidTopicException, "Topic name %q is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)
		}
	}
	return nil
}

// collisionName maps '.' to '_', as Kafka does to detect metric collisions.
func collisionName(name string) string { return strings.ReplaceAll(name, ".", "_") }

// topicSpec is a topic to create.
type topicSpec struct {
	name       string
	partitions int32 // -1 = num.partitions
	rf         int16 // -1 = default.replication.factor
	assignment [][]int32
	configs    map[string]string
}

// createTopic validates spec and, unless validateOnly, creates the topic.
func (b *Broker) createTopic(spec topicSpec, validateOnly bool) (*topic, error) {
	replicas, err := b.planTopic(&spec)
	if err != nil || validateOnly {
		return nil, err
	}
	id := zkmeta.NewUUID()
	if err := b.writeNewTopic(spec.name, id, replicas, spec.configs); err != nil {
		return nil, err
	}
	if err := b.reloadTopic(spec.name); err != nil {
		return nil, err
	}
	b.log.Info("topic created", "topic", spec.name, "partitions", len(replicas), "topic_id", zkmeta.UUIDString(id))
	return b.cluster.topic(spec.name), nil
}

// planTopic validates spec and returns the replica assignment.
func (b *Broker) planTopic(spec *topicSpec) ([][]int32, error) {
	if err := validateTopicName(spec.name); err != nil {
		return nil, err
	}
	if t := b.cluster.topic(spec.name); t != nil {
		return nil, adminErr(kproto.CodeTopicAlreadyExists, "Topic '%s' already exists.", spec.name)
	}
	for _, t := range b.cluster.allTopics() {
		if collisionName(t.name) == collisionName(spec.name) {
			return nil, adminErr(kproto.CodeInvalidTopicException, "Topic '%s' collides with existing topic: %s", spec.name, t.name)
		}
	}
	if err := validateTopicConfigs(spec.configs); err != nil {
		return nil, adminErr(kproto.CodeInvalidConfig, "%v", err)
	}
	live := b.cluster.liveBrokers()
	if len(spec.assignment) > 0 {
		if spec.partitions != -1 || spec.rf != -1 {
			return nil, adminErr(kproto.CodeInvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
		}
		return spec.assignment, b.checkAssignment(spec.assignment, 0)
	}
	if spec.partitions == -1 {
		spec.partitions = b.cfg.NumPartitions
	}
	if spec.rf == -1 {
		spec.rf = b.cfg.DefaultReplicationFactor
	}
	if spec.partitions <= 0 {
		return nil, adminErr(kproto.CodeInvalidPartitions, "Number of partitions must be larger than 0.")
	}
	if spec.rf <= 0 {
		return nil, adminErr(kproto.CodeInvalidReplicationFactor, "Replication factor must be larger than 0.")
	}
	if int(spec.rf) > len(live) {
		return nil, adminErr(kproto.CodeInvalidReplicationFactor, "Replication factor: %d larger than available brokers: %d.", spec.rf, len(live))
	}
	return assignReplicas(live, int(spec.partitions), int(spec.rf))
}

// checkAssignment validates a manual assignment for partitions from first.
func (b *Broker) checkAssignment(a [][]int32, first int) error {
	for i, reps := range a {
		if len(reps) == 0 || len(reps) != len(a[0]) {
			return adminErr(kproto.CodeInvalidReplicaAssignment, "partition %d: all partitions need the same, non-zero number of replicas", first+i)
		}
		seen := map[int32]bool{}
		for _, r := range reps {
			if seen[r] {
				return adminErr(kproto.CodeInvalidReplicaAssignment, "partition %d: duplicate replica %d", first+i, r)
			}
			seen[r] = true
			if !b.cluster.isLive(r) {
				return adminErr(kproto.CodeInvalidReplicaAssignment, "partition %d: broker %d is not registered", first+i, r)
			}
		}
	}
	return nil
}

// writeNewTopic writes the topic's znodes; with the controller's epoch
// check and the partition states when this broker is the controller.
func (b *Broker) writeNewTopic(name string, id [16]byte, replicas [][]int32, configs map[string]string) error {
	if configs == nil {
		configs = map[string]string{}
	}
	ops := []any{
		&zk.CreateRequest{Path: zkmeta.TopicConfigPath(name), Data: zkmeta.MustJSON(zkmeta.ConfigZNode{Version: 1, Config: configs})},
		&zk.CreateRequest{Path: zkmeta.TopicPath(name), Data: zkmeta.EncodeTopicZNode(id, replicas)},
	}
	if check, epoch, err := b.epochCheck(); err == nil {
		ops = append([]any{check}, ops...)
		ops = append(ops, &zk.CreateRequest{Path: zkmeta.PartitionsPath(name)})
		for p, r := range replicas {
			ops = append(ops, &zk.CreateRequest{Path: zkmeta.PartitionPath(name, p)})
			if s, ok := controller.NewPartitionState(r, b.cluster.isLive, isrIsLive, epoch); ok {
				ops = append(ops, &zk.CreateRequest{Path: zkmeta.StatePath(name, p), Data: controller.StateZNode(s)})
			}
		}
	}
	err := b.zk.Multi(ops...)
	if errors.Is(err, zk.ErrNodeExists) {
		return adminErr(kproto.CodeTopicAlreadyExists, "Topic '%s' already exists.", name)
	}
	return err
}

// deleteTopic marks a topic for deletion and waits (up to timeout) for
// the controller to delete it: it does once every replica deleted its
// data (controller/deletion.go), so a replica whose broker is down makes
// the request time out, as in Kafka, and the deletion completes later.
func (b *Broker) deleteTopic(name string, timeout time.Duration) error {
	if b.cluster.topic(name) == nil {
		return adminErr(kproto.CodeUnknownTopicOrPartition, "This server does not host this topic-partition.")
	}
	if !b.cfg.DeleteTopicEnable {
		return adminErr(73, "Topic deletion is disabled.") // TOPIC_DELETION_DISABLED
	}
	if err := b.zk.Create(zkmeta.DeleteTopicPath(name), nil, 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		// The controller deletes the marker last.
		ok, _, ch, err := b.zk.Conn.ExistsW(b.zk.Path(zkmeta.DeleteTopicPath(name)))
		if err != nil {
			return err
		}
		if !ok {
			b.dropTopic(name)
			return nil
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			return adminErr(kproto.CodeRequestTimedOut, "deletion of %s not completed by the controller in time", name)
		case <-b.done:
			return adminErr(kproto.CodeRequestTimedOut, "broker shutting down")
		}
	}
}

// createPartitions grows a topic to count partitions. Only the controller
// does (its loop writes the new partitions' states; no broker watches a
// topic znode's data): elsewhere it is NOT_CONTROLLER, as Kafka's
// ZooKeeper-mode KafkaApis answers, and clients retry at the controller.
func (b *Broker) createPartitions(name string, count int32, assignment [][]int32, validateOnly bool) error {
	if active, _, _ := b.ctrl.get(); !active {
		return adminErr(kproto.CodeNotController, "This is not the correct controller for this cluster.")
	}
	t := b.cluster.topic(name)
	if t == nil {
		return adminErr(kproto.CodeUnknownTopicOrPartition, "The topic '%s' does not exist.", name)
	}
	if err := checkRacksEnforced(b.cluster.liveBrokers()); err != nil {
		return err
	}
	cur := int32(len(t.replicas))
	if count <= cur {
		return adminErr(kproto.CodeInvalidPartitions, "Topic currently has %d partitions, which is higher than the requested %d.", cur, count)
	}
	rf := len(t.replicas[0])
	var add [][]int32
	var err error
	if assignment != nil {
		if int32(len(assignment)) != count-cur {
			return adminErr(kproto.CodeInvalidReplicaAssignment, "Increasing the number of partitions by %d but %d assignments provided.", count-cur, len(assignment))
		}
		if err := b.checkAssignment(assignment, int(cur)); err != nil {
			return err
		}
		add = assignment
	} else {
		live := b.cluster.liveBrokers()
		if rf > len(live) {
			return adminErr(kproto.CodeInvalidReplicationFactor, "Replication factor: %d larger than available brokers: %d.", rf, len(live))
		}
		if add, err = addedReplicas(live, t.replicas, int(count-cur)); err != nil {
			return err
		}
	}
	if validateOnly {
		return nil
	}
	data, st, err := b.zk.Get(zkmeta.TopicPath(name))
	if err != nil {
		return err
	}
	var moves zkmeta.TopicZNode
	if json.Unmarshal(data, &moves) == nil && (len(moves.AddingReplicas) > 0 || len(moves.RemovingReplicas) > 0) {
		// REASSIGNMENT_IN_PROGRESS, as Kafka's ZooKeeper-mode admin manager.
		return adminErr(60, "A partition reassignment is in progress for the topic '%s'.", name)
	}
	all := append(append([][]int32(nil), t.replicas...), add...)
	if _, err := b.zk.Set(zkmeta.TopicPath(name), zkmeta.EncodeTopicZNode(t.id, all), st.Version); err != nil {
		return err
	}
	b.ctl.TopicsChanged(b.done, []string{name})
	return b.reloadTopic(name)
}
