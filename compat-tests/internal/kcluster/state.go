package kcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// Registered lists the broker ids in /brokers/ids, sorted.
func (c *Cluster) Registered() []int32 {
	kids, _, err := c.children("/brokers/ids")
	if err != nil {
		return nil
	}
	var ids []int32
	for _, k := range kids {
		if n, err := strconv.Atoi(k); err == nil {
			ids = append(ids, int32(n))
		}
	}
	slices.Sort(ids)
	return ids
}

// Controller is the broker id in /controller, or -1 when there is none.
func (c *Cluster) Controller() int32 {
	data, _, err := c.get("/controller")
	if err != nil {
		return -1
	}
	var z zkmeta.ControllerZNode
	if json.Unmarshal(data, &z) != nil {
		return -1
	}
	return z.BrokerID
}

// ControllerEpoch is /controller_epoch's value (0 when absent).
func (c *Cluster) ControllerEpoch() int32 {
	data, _, err := c.get("/controller_epoch")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(string(data))
	return int32(n)
}

// State reads /brokers/topics/{topic}/partitions/{p}/state.
func (c *Cluster) State(topic string, p int32) (zkmeta.PartitionStateZNode, error) {
	var s zkmeta.PartitionStateZNode
	data, _, err := c.get(fmt.Sprintf("/brokers/topics/%s/partitions/%d/state", topic, p))
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	return s, err
}

// Leader is partition p's leader in its state znode, -1 when it has none
// or the znode cannot be read.
func (c *Cluster) Leader(topic string, p int32) int32 {
	s, err := c.State(topic, p)
	if err != nil {
		return -1
	}
	return s.Leader
}

// LedBy lists the partitions (of partitions 0..n-1) whose leader is id.
func (c *Cluster) LedBy(topic string, n int32, id int32) []int32 {
	var out []int32
	for p := range n {
		if c.Leader(topic, p) == id {
			out = append(out, p)
		}
	}
	return out
}

// WaitFor polls cond every 20 ms until it holds, failing the test after
// timeout with what.
func (c *Cluster) WaitFor(what string, timeout time.Duration, cond func() bool) {
	c.T.Helper()
	if !Poll(timeout, cond) {
		c.T.Fatalf("kcluster: never %s within %v", what, timeout)
	}
}

// Poll polls cond every 20 ms until it holds (true) or timeout passes.
func Poll(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// Client returns a kgo client seeded with every broker, closed at cleanup;
// opts come after short metadata-age and retry-backoff defaults.
func (c *Cluster) Client(opts ...kgo.Opt) *kgo.Client {
	c.T.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(c.Seeds()...), kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		c.T.Fatalf("kgo.NewClient: %v", err)
	}
	c.T.Cleanup(cl.Close)
	return cl
}

// CreateTopic creates topic with partitions and replication factor rf
// (configs may be nil) and waits until each partition's state znode names
// a leader.
func (c *Cluster) CreateTopic(topic string, partitions int32, rf int16, configs map[string]*string) {
	c.T.Helper()
	adm := kadm.NewClient(c.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The broker that creates the topic counts the live brokers it has
	// heard of, which may lag /brokers/ids by a moment after Start (as
	// Kafka's metadata cache does): INVALID_REPLICATION_FACTOR with enough
	// brokers registered is tried again, within the same bound.
	var err error
	for {
		var resp kadm.CreateTopicResponse
		resp, err = adm.CreateTopic(ctx, partitions, rf, configs, topic)
		if err == nil {
			err = resp.Err
		}
		if !errors.Is(err, kerr.InvalidReplicationFactor) || len(c.Registered()) < int(rf) || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		c.T.Fatalf("create topic %s (%d partitions, RF %d): %v", topic, partitions, rf, err)
	}
	c.WaitFor("a leader for every partition of "+topic, 30*time.Second, func() bool {
		for p := range partitions {
			if c.Leader(topic, p) < 0 {
				return false
			}
		}
		return true
	})
}

// Endpoints are the listeners broker id registered in /brokers/ids/{id}
// ("PLAINTEXT://127.0.0.1:port", ...).
func (c *Cluster) Endpoints(id int32) ([]string, error) {
	data, _, err := c.get(fmt.Sprintf("/brokers/ids/%d", id))
	if err != nil {
		return nil, err
	}
	var z zkmeta.BrokerZNode
	err = json.Unmarshal(data, &z)
	return z.Endpoints, err
}
