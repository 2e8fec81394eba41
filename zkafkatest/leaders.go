package zkafkatest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/broker/zkmeta"
)

// Kafka's admin znodes, as its tools write them (ZkData.scala):
// kafka-reassign-partitions and kafka-leader-election --zookeeper.
const (
	reassignPath  = "/admin/reassign_partitions"
	preferredPath = "/admin/preferred_replica_election"
)

// moveLimit bounds each step of MoveLeader and MoveController.
const moveLimit = 30 * time.Second

// Controller is the broker.id that /controller names, or -1 without one.
func (c *Cluster) Controller() (int32, error) {
	data, _, err := c.admin.Get(c.zpath("/controller"))
	if errors.Is(err, zk.ErrNoNode) {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	var z zkmeta.ControllerZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return -1, fmt.Errorf("zkafkatest: /controller: %w", err)
	}
	return z.BrokerID, nil
}

// MoveController makes broker to the controller as Kafka's operators do:
// it deletes /controller, and the brokers race to create it again; the
// deletion is repeated (up to 30 s) until broker to has won.
func (c *Cluster) MoveController(to int32) error {
	if !c.Running(Broker(to)) {
		return fmt.Errorf("zkafkatest: %s is not running", Broker(to))
	}
	deadline := time.Now().Add(moveLimit)
	for time.Now().Before(deadline) {
		_, st, ch, err := c.admin.GetW(c.zpath("/controller"))
		switch {
		case errors.Is(err, zk.ErrNoNode):
			time.Sleep(10 * time.Millisecond) // an election is under way
			continue
		case err != nil:
			return err
		}
		if id, err := c.Controller(); err != nil {
			return err
		} else if id == to {
			return nil
		}
		if err := c.admin.Delete(c.zpath("/controller"), st.Version); err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
			return err
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		}
	}
	return fmt.Errorf("zkafkatest: broker %d did not become the controller within %v", to, moveLimit)
}

// Leader is the leader of topic's partition p that its state znode names
// (-1: none).
func (c *Cluster) Leader(topic string, p int32) (int32, error) {
	st, err := c.partitionState(topic, p)
	if err != nil {
		return -1, err
	}
	return st.Leader, nil
}

// ISR is the in-sync replicas of topic's partition p that its state
// znode names.
func (c *Cluster) ISR(topic string, p int32) ([]int32, error) {
	st, err := c.partitionState(topic, p)
	if err != nil {
		return nil, err
	}
	return st.ISR, nil
}

func (c *Cluster) partitionState(topic string, p int32) (zkmeta.PartitionStateZNode, error) {
	var st zkmeta.PartitionStateZNode
	data, _, err := c.admin.Get(c.zpath(zkmeta.StatePath(topic, int(p))))
	if err != nil {
		return st, fmt.Errorf("zkafkatest: %s partition %d: %w", topic, p, err)
	}
	return st, json.Unmarshal(data, &st)
}

// MoveLeader makes broker to the leader of topic's partition p, as
// Kafka's tools do through ZooKeeper: if to is not the partition's
// preferred (first) replica, a reassignment to the same replicas with to
// first (/admin/reassign_partitions, which the controller deletes when
// done), then a preferred replica election
// (/admin/preferred_replica_election, likewise); then it waits until the
// partition's state names to. Each step waits up to 30 s for the
// controller; to must be a replica in the ISR.
func (c *Cluster) MoveLeader(topic string, p int32, to int32) error {
	replicas, err := c.replicas(topic, p)
	if err != nil {
		return err
	}
	if !slices.Contains(replicas, to) {
		return fmt.Errorf("zkafkatest: broker %d is not a replica of %s partition %d (replicas %v)", to, topic, p, replicas)
	}
	if leader, err := c.Leader(topic, p); err != nil || leader == to {
		return err
	}
	if replicas[0] != to {
		order := append([]int32{to}, slices.DeleteFunc(slices.Clone(replicas), func(r int32) bool { return r == to })...)
		body := map[string]any{"version": 1, "partitions": []map[string]any{{"topic": topic, "partition": p, "replicas": order}}}
		if err := c.adminStep(reassignPath, body); err != nil {
			return err
		}
	}
	body := map[string]any{"version": 1, "partitions": []map[string]any{{"topic": topic, "partition": p}}}
	if err := c.adminStep(preferredPath, body); err != nil {
		return err
	}
	return poll(moveLimit, func() (bool, error) {
		leader, err := c.Leader(topic, p)
		return err == nil && leader == to, err
	})
}

// adminStep creates an admin znode and waits until the controller has
// acted on it and deleted it.
func (c *Cluster) adminStep(path string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	path = c.zpath(path)
	if _, err := c.admin.Create(path, data, 0, zk.WorldACL(zk.PermAll)); err != nil {
		return fmt.Errorf("zkafkatest: creating %s: %w", path, err)
	}
	err = poll(moveLimit, func() (bool, error) {
		ok, _, err := c.admin.Exists(path)
		return err == nil && !ok, err
	})
	if err != nil {
		c.admin.Delete(path, -1)
		return fmt.Errorf("zkafkatest: the controller did not act on %s within %v: %w", path, moveLimit, err)
	}
	return nil
}

// replicas is the assignment of topic's partition p in
// /brokers/topics/{topic}.
func (c *Cluster) replicas(topic string, p int32) ([]int32, error) {
	data, _, err := c.admin.Get(c.zpath(zkmeta.TopicPath(topic)))
	if err != nil {
		return nil, fmt.Errorf("zkafkatest: topic %s: %w", topic, err)
	}
	var z zkmeta.TopicZNode
	if err := json.Unmarshal(data, &z); err != nil {
		return nil, err
	}
	r, ok := z.Partitions[strconv.Itoa(int(p))]
	if !ok {
		return nil, fmt.Errorf("zkafkatest: topic %s has no partition %d", topic, p)
	}
	return r, nil
}
