package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/zkafka/zkafka/compat-tests/internal/benchkit"
	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
	"github.com/zkafka/zkafka/compat-tests/internal/kworkload"
)

const failTopic = "failover"

// failoverCase: kill -9 of partition 0's leader under a steady idempotent
// acks=all load, the time until each of its partitions takes an
// acknowledged write again (the slowest), then restart and wait for the
// ISR; the median over *failovers.
func failoverCase(c *kcluster.Cluster, replicated bool) {
	bound := c.Opts.SessionTimeout + time.Second
	fmt.Printf("\n== failover: kill -9 of a leader → first acknowledged write on its partitions (median of %d; target ≤ %v)\n", *failovers, bound)
	if !replicated {
		fmt.Println("skipped: no replication")
		return
	}
	c.CreateTopic(failTopic, partitions, 3, nil)
	prod, err := kworkload.StartProducer(c.Seeds(), failTopic, partitions, 400)
	if err != nil {
		fmt.Printf("error: %v\n", err)
		return
	}
	defer prod.Stop(10 * time.Second)
	var times benchkit.Latencies
	for i := range *failovers {
		victim := c.Leader(failTopic, int32(i)%partitions)
		led := c.LedBy(failTopic, partitions, victim)
		t0 := time.Now()
		c.Kill9(victim)
		d, err := prod.WaitAcks(led, t0, c.Opts.SessionTimeout+20*time.Second)
		if err != nil {
			fmt.Printf("failover %d (broker %d): %v\n", i+1, victim, err)
			return
		}
		times.Add(d)
		c.Restart(victim)
		if !fullISR(c, failTopic, partitions, 3, 45*time.Second) {
			fmt.Printf("after failover %d broker %d did not rejoin every ISR within 45 s: %s\n", i+1, victim, states(c, failTopic))
			return
		}
	}
	med := times.Percentile(50)
	fmt.Printf("median %v, min %v, max %v %s\n", med.Round(time.Millisecond), times.Percentile(0.01).Round(time.Millisecond),
		times.Percentile(100).Round(time.Millisecond), met(med <= bound))
}

const shutdownTopic = "shutdown"

// shutdownCase: SIGTERM of a leader of a topic of its own; the time until
// no partition state names it as leader, then restart.
func shutdownCase(c *kcluster.Cluster, replicated bool) {
	fmt.Printf("\n== controlled shutdown: SIGTERM of a leader → no partition led by it (median of %d; target ≤ 1 s)\n", *shutdowns)
	if !replicated {
		fmt.Println("skipped: no replication")
		return
	}
	c.CreateTopic(shutdownTopic, partitions, 3, nil)
	if !fullISR(c, shutdownTopic, partitions, 3, 30*time.Second) {
		fmt.Printf("the ISR of %s never held every replica: %s\n", shutdownTopic, states(c, shutdownTopic))
		return
	}
	var times benchkit.Latencies
	for i := range *shutdowns {
		victim := c.Leader(shutdownTopic, int32(i)%partitions)
		t0 := time.Now()
		done := make(chan struct{})
		go func() { defer close(done); c.Term(victim, 30*time.Second) }()
		moved := kcluster.Poll(30*time.Second, func() bool { return len(c.LedBy(shutdownTopic, partitions, victim)) == 0 })
		d := time.Since(t0)
		<-done
		if !moved {
			fmt.Printf("shutdown %d (broker %d): still leading %v\n", i+1, victim, c.LedBy(shutdownTopic, partitions, victim))
			return
		}
		times.Add(d)
		c.Restart(victim)
		if !fullISR(c, shutdownTopic, partitions, 3, 45*time.Second) {
			fmt.Printf("after shutdown %d broker %d did not rejoin every ISR within 45 s: %s\n", i+1, victim, states(c, shutdownTopic))
			return
		}
	}
	med := times.Percentile(50)
	fmt.Printf("median %v, max %v %s\n", med.Round(time.Millisecond), times.Percentile(100).Round(time.Millisecond), met(med <= time.Second))
}

// states is each partition's leader and ISR, for a failure message.
func states(c *kcluster.Cluster, topic string) string {
	var out []string
	for p := range int32(partitions) {
		s, err := c.State(topic, p)
		out = append(out, fmt.Sprintf("p%d leader %d isr %v %v", p, s.Leader, s.ISR, err))
	}
	return strings.Join(out, "; ")
}
