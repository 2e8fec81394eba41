package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// freePorts returns the first of n consecutive 127.0.0.1 ports that were
// free a moment ago.
func freePorts(t *testing.T, n int) int {
	for try := 0; try < 50; try++ {
		base, _ := strconv.Atoi((func() string { _, p, _ := net.SplitHostPort(freeAddr(t)); return p })())
		ok := base+n <= 65535
		for i := 0; ok && i < n; i++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free consecutive ports")
	return 0
}

// TestRunBrokersFormsACluster: `zkafka run -brokers 3` starts ZooKeeper
// and three brokers (ids 0..2, consecutive ports, one data dir each) that
// form one cluster: Metadata lists the three, a topic with RF 3 is placed
// on all of them, and RF 4 is INVALID_REPLICATION_FACTOR.
func TestRunBrokersFormsACluster(t *testing.T) {
	dir := t.TempDir()
	base := freePorts(t, 3)
	cmd := commandProcess([]string{"run", "-brokers", "3", "-data", filepath.Join(dir, "data"),
		"-zookeeper-addr", freeAddr(t), "-kafka-addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(base))})
	logf, err := os.Create(filepath.Join(dir, "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("child log:\n%s", b)
		}
	})
	var seeds []string
	for i := 0; i < 3; i++ {
		seeds = append(seeds, net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i)))
	}
	c, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	adm := kadm.NewClient(c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		bs, err := adm.ListBrokers(ctx)
		if err == nil && len(bs) == 3 {
			for i, b := range bs.NodeIDs() {
				if b != int32(i) {
					t.Fatalf("broker ids %v, want 0 1 2", bs.NodeIDs())
				}
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("never saw 3 brokers: %v %v", bs, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r, err := adm.CreateTopic(ctx, 3, 3, nil, "rf3")
	if err != nil || r.Err != nil {
		t.Fatalf("create RF 3: %v %v", err, r.Err)
	}
	r, err = adm.CreateTopic(ctx, 1, 4, nil, "rf4")
	if !errors.Is(r.Err, kerr.InvalidReplicationFactor) { // kadm returns r.Err as err too
		t.Fatalf("create RF 4: %v %v, want INVALID_REPLICATION_FACTOR", err, r.Err)
	}
	// As with Kafka, the topic's metadata reaches the brokers shortly
	// after CreateTopics returns (the controller's state writes).
	var td kadm.TopicDetails
	for {
		td, err = adm.ListTopics(ctx, "rf3")
		if err == nil && len(td["rf3"].Partitions) == 3 && allLed(td["rf3"]) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("rf3 never served with 3 led partitions: %v %+v", err, td)
		}
		time.Sleep(50 * time.Millisecond)
	}
	leaders := map[int32]bool{}
	for _, p := range td["rf3"].Partitions.Sorted() {
		if len(p.Replicas) != 3 || p.Leader != p.Replicas[0] {
			t.Fatalf("partition %d: replicas %v leader %d, want 3 replicas led by the first", p.Partition, p.Replicas, p.Leader)
		}
		leaders[p.Leader] = true
	}
	// Kafka's placement shifts each partition's first replica.
	if len(leaders) != 3 {
		t.Fatalf("leaders %v, want every broker to lead one of the 3 partitions", leaders)
	}
}

// allLed reports whether every partition of a topic has a leader.
func allLed(td kadm.TopicDetail) bool {
	for _, p := range td.Partitions {
		if p.Err != nil || p.Leader < 0 {
			return false
		}
	}
	return true
}
