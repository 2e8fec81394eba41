package racks

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

const (
	mib       = 1 << 20
	rate      = mib // the throttles' rate, bytes/s
	window    = 5 * time.Second
	topicSize = 24 * mib
)

// fill produces size bytes to topic in 100 KiB records, acks=all.
func fill(t testing.TB, cl *kafkaenv.Cluster, topic string, size int) time.Duration {
	t.Helper()
	p := client(t, cl, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchMaxBytes(mib),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	val := make([]byte, 100<<10)
	rand.Read(val)
	start := time.Now()
	for n := 0; n < size; n += len(val) {
		p.Produce(ctxT(t), &kgo.Record{Value: val}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := p.Flush(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// replicaSize is the size of topic-0 on broker id (DescribeLogDirs).
func replicaSize(t testing.TB, adm *kadm.Client, id int32, topic string) int64 {
	t.Helper()
	ds, err := adm.DescribeBrokerLogDirs(ctxT(t), id, kadm.TopicsSet{topic: {0: {}}})
	if err != nil || ds.Error() != nil {
		t.Fatalf("DescribeLogDirs of broker %d: %v %v", id, err, ds.Error())
	}
	p, _ := ds.LookupPartition(topic, 0)
	return p.Size
}

// copiedIn is how many bytes broker id copied of topic-0 in window,
// counted from when its replica has its first bytes (the reassignment
// reaches the broker in its own time; under load that can take seconds).
func copiedIn(t testing.TB, adm *kadm.Client, id int32, topic string) int64 {
	t.Helper()
	start := time.Now()
	for replicaSize(t, adm, id, topic) == 0 {
		if time.Since(start) > 30*time.Second {
			rs, err := adm.ListPartitionReassignments(ctxT(t), kadm.TopicsSet{topic: {0: {}}})
			t.Logf("reassignments of %s: %+v %v", topic, rs, err)
			td, err := adm.ListTopics(ctxT(t), topic)
			t.Logf("metadata of %s: %+v %v", topic, td[topic].Partitions, err)
			t.Fatalf("broker %d's replica of %s-0 has no bytes 30 s after the reassignment", id, topic)
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := replicaSize(t, adm, id, topic)
	for i := 0; i < 5; i++ {
		time.Sleep(window / 5)
		t.Logf("broker %d: %d bytes of %s", id, replicaSize(t, adm, id, topic), topic)
	}
	return replicaSize(t, adm, id, topic) - before
}

func ptr(s string) *string { return &s }

// checker binds a test to helpers that take a kadm call's results.
type checker struct{ t testing.TB }

func (c checker) alter(rs kadm.AlterConfigsResponses, err error) {
	c.t.Helper()
	for _, r := range rs {
		if err == nil && r.Err != nil {
			err = r.Err
		}
	}
	if err != nil {
		c.t.Fatalf("alter configs: %v", err)
	}
}

func (c checker) described(rs kadm.ResourceConfigs, err error) kadm.ResourceConfigs {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("describe configs: %v", err)
	}
	return rs
}

func set(k, v string) kadm.AlterConfig {
	return kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v}
}
func unset(k string) kadm.AlterConfig { return kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k} }
func reassign(t testing.TB, adm *kadm.Client, topic string, replicas ...int32) {
	t.Helper()
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, 0, replicas)
	if rs, err := adm.AlterPartitionAssignments(ctxT(t), req); err != nil || rs.Error() != nil {
		t.Fatalf("AlterPartitionAssignments: %v %v", err, rs.Error())
	}
}

// waitInSync waits (bounded) until topic-0's ISR has n replicas, and
// returns how long that took.
func waitInSync(t testing.TB, cl *kafkaenv.Cluster, topic string, n int, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	adm := kadm.NewClient(client(t, cl))
	for time.Since(start) < limit {
		td, err := adm.ListTopics(ctxT(t), topic)
		if err == nil && len(td[topic].Partitions[0].ISR) == n {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: the ISR never had %d replicas in %v", topic, n, limit)
	return 0
}

// source is the value and source of a config of resource name.
func source(t testing.TB, rs kadm.ResourceConfigs, name, key string) (string, kmsg.ConfigSource) {
	t.Helper()
	r, err := rs.On(name, nil)
	if err != nil || r.Err != nil {
		t.Fatalf("describe %s: %v %v", name, err, r.Err)
	}
	for _, c := range r.Configs {
		if c.Key == key {
			v := ""
			if c.Value != nil {
				v = *c.Value
			}
			return v, c.Source
		}
	}
	t.Fatalf("%s: no %s", name, key)
	return "", 0
}

// TestReplicationThrottles: a new follower (a reassignment of a partition
// from broker 1 to brokers 1 and 2) catches up 24 MiB at about 1 MiB/s
// with the leader's throttle, then with the follower's; without them it
// catches up at full speed. Followers in the ISR are never throttled by
// the leader. DescribeConfigs shows the values and their sources.
func TestReplicationThrottles(t *testing.T) {
	// Kafka's replica.lag.time.max.ms, so that a throttled follower in the
	// ISR would slow acks=all down rather than leave the ISR.
	cl := kafkaenv.StartCluster(t, 2, withRacks(""), kafkaenv.VerboseLogs(), kafkaenv.Configure(func(c *broker.Config) {
		c.Replication.LagTimeMax = 30 * time.Second
	}))
	t.Cleanup(func() {
		if t.Failed() { // what the brokers said, to tell where a copy stalled
			for _, e := range cl.Brokers {
				for _, r := range e.Logs.All() {
					t.Logf("broker %d: %s", e.Config.BrokerID, r)
				}
			}
		}
	})
	c := checker{t}
	adm := kadm.NewClient(client(t, cl))
	// The throttled replicas are named from the start: broker 1 as leader,
	// broker 2 as follower. Which throttle acts is then a matter of the
	// brokers' own rates, which each broker applies as it answers the
	// alter (a topic's config reaches the brokers later, through
	// /config/changes).
	createAssigned(t, cl, "throttled", [][]int32{{1}}, map[string]*string{
		"leader.replication.throttled.replicas": ptr("0:1"), "follower.replication.throttled.replicas": ptr("*")})
	createAssigned(t, cl, "free", [][]int32{{1}}, nil)
	fill(t, cl, "throttled", topicSize)
	fill(t, cl, "free", topicSize)

	// Unthrottled: the whole copy, at full speed.
	reassign(t, adm, "free", 1, 2)
	took := waitInSync(t, cl, "free", 2, 60*time.Second)
	t.Logf("unthrottled: %d MiB copied in %v", topicSize/mib, took)
	if took > topicSize/rate*time.Second/2 {
		t.Errorf("the unthrottled copy took %v, over half the throttled minimum", took)
	}

	// The leader's throttle.
	c.alter(adm.AlterBrokerConfigs(ctxT(t), []kadm.AlterConfig{set("leader.replication.throttled.rate", "1048576")}, 1))
	reassign(t, adm, "throttled", 1, 2)
	if n := copiedIn(t, adm, 2, "throttled"); n <= 0 || n > 2*rate*int64(window/time.Second) {
		t.Errorf("leader throttle: %d bytes copied in %v at %d B/s", n, window, rate)
	} else {
		t.Logf("leader throttle: %.1f MiB in %v", float64(n)/mib, window)
	}
	v, src := source(t, c.described(adm.DescribeBrokerConfigs(ctxT(t), 1)), "1", "leader.replication.throttled.rate")
	if v != "1048576" || src != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("broker 1 leader.replication.throttled.rate: %q %v", v, src)
	}
	v, src = source(t, c.described(adm.DescribeTopicConfigs(ctxT(t), "throttled")), "throttled", "leader.replication.throttled.replicas")
	if v != "0:1" || src != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("leader.replication.throttled.replicas: %q %v", v, src)
	}

	// The follower's throttle, instead.
	c.alter(adm.AlterBrokerConfigs(ctxT(t), []kadm.AlterConfig{set("follower.replication.throttled.rate", "1048576")}, 2))
	c.alter(adm.AlterBrokerConfigs(ctxT(t), []kadm.AlterConfig{unset("leader.replication.throttled.rate")}, 1))
	if n := copiedIn(t, adm, 2, "throttled"); n <= 0 || n > 2*rate*int64(window/time.Second) {
		t.Errorf("follower throttle: %d bytes copied in %v at %d B/s", n, window, rate)
	} else {
		t.Logf("follower throttle: %.1f MiB in %v", float64(n)/mib, window)
	}
	v, src = source(t, c.described(adm.DescribeBrokerConfigs(ctxT(t), 2)), "2", "follower.replication.throttled.rate")
	if v != "1048576" || src != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Errorf("broker 2 follower.replication.throttled.rate: %q %v", v, src)
	}
	if size := replicaSize(t, adm, 2, "throttled"); size >= topicSize*9/10 {
		t.Fatalf("broker 2 holds %d bytes of %d already", size, topicSize)
	}

	// No throttle: the rest at full speed.
	c.alter(adm.AlterBrokerConfigs(ctxT(t), []kadm.AlterConfig{unset("follower.replication.throttled.rate")}, 2))
	took = waitInSync(t, cl, "throttled", 2, 60*time.Second)
	t.Logf("the rest after the throttles went: %v", took)

	// The leader throttles only followers out of the ISR: broker 2, in
	// it, keeps up with acks=all produces at full speed.
	c.alter(adm.AlterBrokerConfigs(ctxT(t), []kadm.AlterConfig{set("leader.replication.throttled.rate", "1048576")}, 1))
	if took := fill(t, cl, "throttled", 12*mib); took > 12*time.Second/2 {
		t.Errorf("12 MiB acks=all to an in-sync follower took %v with the leader throttled", took)
	} else {
		t.Logf("12 MiB acks=all with the leader throttled: %v", took)
	}
}
