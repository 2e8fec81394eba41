// Command groupbench measures the group coordinator with franz-go against
// an in-process ZooKeeper (quorum) and broker on 127.0.0.1 port 0:
//
//   - OffsetCommit throughput: one group, one member, every request
//     committing 8 partitions; from 1 connection (each commit waits for
//     the previous: the ZooKeeper write latency) and from 16 connections
//     (commits pipelined into ZooKeeper);
//   - rebalance time: a 10-member group (heartbeat interval 100 ms) is
//     Stable; an 11th member joins; the time until DescribeGroups shows
//     11 members Stable with all partitions assigned.
//
// Used by scripts/bench.d/30-groups.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/quorum"
)

func main() {
	dur := flag.Duration("d", 5*time.Second, "duration of each commit run")
	rounds := flag.Int("rebalances", 3, "joins to time")
	flag.Parse()
	if err := run(*dur, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "groupbench:", err)
		os.Exit(1)
	}
}

func run(dur time.Duration, rounds int) error {
	dir, err := os.MkdirTemp("", "groupbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	qcfg := quorum.DefaultConfig(dir + "/zk")
	qcfg.ClientPort, qcfg.ClientPortAddress, qcfg.MaxClientCnxns = 0, "127.0.0.1", 0
	zl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	zk, err := quorum.StartWithListener(qcfg, log, zl)
	if err != nil {
		return err
	}
	defer zk.Close()
	cfg := broker.DefaultConfig(dir + "/kafka")
	cfg.Listeners = []string{"PLAINTEXT://127.0.0.1:0"}
	cfg.ZooKeeperConnect = zl.Addr().String()
	cfg.Groups.InitialRebalanceDelay = 0
	cfg.Groups.MinSessionTimeout = time.Second
	b, err := broker.New(cfg, log)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go b.Serve(l)
	defer b.Shutdown(context.Background())
	seed := l.Addr().String()
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) {
		return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seed)}, opts...)...)
	}
	admCl, err := newClient()
	if err != nil {
		return err
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	ctx := context.Background()
	for _, t := range []string{"bench-commits", "bench-rebalance"} {
		if _, err := adm.CreateTopic(ctx, 12, 1, nil, t); err != nil {
			return err
		}
	}
	if err := commitBench(ctx, newClient, dur); err != nil {
		return err
	}
	return rebalanceBench(ctx, newClient, adm, rounds)
}

func commitBench(ctx context.Context, newClient func(...kgo.Opt) (*kgo.Client, error), dur time.Duration) error {
	const group = "bench-commit-group"
	cl, err := newClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	// One member: join (twice, for MEMBER_ID_REQUIRED) and sync.
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = group, "consumer", 30000, 30000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	join.Protocols = append(join.Protocols, p)
	jr, err := join.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	join.MemberID = jr.MemberID
	if jr, err = join.RequestWith(ctx, cl); err != nil || jr.ErrorCode != 0 {
		return fmt.Errorf("join: %v %v", err, jr)
	}
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Group, sg.MemberID, sg.Generation = group, jr.MemberID, jr.Generation
	if sr, err := sg.RequestWith(ctx, cl); err != nil || sr.ErrorCode != 0 {
		return fmt.Errorf("sync: %v %v", err, sr)
	}
	stopHB := make(chan struct{})
	defer close(stopHB)
	go func() {
		for {
			select {
			case <-stopHB:
				return
			case <-time.After(time.Second):
			}
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Group, hb.MemberID, hb.Generation = group, jr.MemberID, jr.Generation
			hb.RequestWith(ctx, cl)
		}
	}()
	for _, conc := range []int{1, 16} {
		clients := make([]*kgo.Client, conc)
		for i := range clients {
			if clients[i], err = newClient(); err != nil {
				return err
			}
			defer clients[i].Close()
		}
		var n, errs atomic.Int64
		var lat []time.Duration
		var latMu sync.Mutex
		deadline := time.Now().Add(dur)
		var wg sync.WaitGroup
		start := time.Now()
		for i, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				for off := int64(i) * 1e9; time.Now().Before(deadline); off++ {
					oc := kmsg.NewPtrOffsetCommitRequest()
					oc.Group, oc.MemberID, oc.Generation = group, jr.MemberID, jr.Generation
					t := kmsg.NewOffsetCommitRequestTopic()
					t.Topic = "bench-commits"
					for part := int32(0); part < 8; part++ {
						pp := kmsg.NewOffsetCommitRequestTopicPartition()
						pp.Partition, pp.Offset, pp.LeaderEpoch = part, off, 0
						t.Partitions = append(t.Partitions, pp)
					}
					oc.Topics = append(oc.Topics, t)
					t0 := time.Now()
					r, err := oc.RequestWith(ctx, c)
					mine = append(mine, time.Since(t0))
					if err != nil || r.Topics[0].Partitions[0].ErrorCode != 0 {
						errs.Add(1)
						continue
					}
					n.Add(1)
				}
				latMu.Lock()
				lat = append(lat, mine...)
				latMu.Unlock()
			}()
		}
		wg.Wait()
		el := time.Since(start)
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		fmt.Printf("offset-commit  connections=%-2d  %8.0f commits/s (8 partitions each)  p50 %v  p99 %v  errors %d\n",
			conc, float64(n.Load())/el.Seconds(), p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), errs.Load())
	}
	return nil
}

func rebalanceBench(ctx context.Context, newClient func(...kgo.Opt) (*kgo.Client, error), adm *kadm.Client, rounds int) error {
	const group, topic = "bench-rebalance-group", "bench-rebalance"
	opts := []kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.SessionTimeout(10 * time.Second), kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.RebalanceTimeout(20 * time.Second)}
	var members []*kgo.Client
	defer func() {
		for _, m := range members {
			m.Close()
		}
	}()
	add := func() error {
		c, err := newClient(opts...)
		if err != nil {
			return err
		}
		members = append(members, c)
		go func() {
			for {
				fs := c.PollFetches(ctx)
				if fs.IsClientClosed() {
					return
				}
			}
		}()
		return nil
	}
	stable := func(n int, limit time.Duration) (time.Duration, error) {
		start := time.Now()
		for time.Since(start) < limit {
			dg, err := adm.DescribeGroups(ctx, group)
			if err == nil {
				g := dg[group]
				if g.State == "Stable" && len(g.Members) == n && len(g.AssignedPartitions()[topic]) == 12 {
					return time.Since(start), nil
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		return 0, fmt.Errorf("group not stable with %d members within %v", n, limit)
	}
	for i := 0; i < 10; i++ {
		if err := add(); err != nil {
			return err
		}
	}
	if _, err := stable(10, 60*time.Second); err != nil {
		return err
	}
	var times []time.Duration
	for r := 0; r < rounds; r++ {
		time.Sleep(500 * time.Millisecond) // let heartbeats settle
		n := len(members) + 1
		start := time.Now()
		if err := add(); err != nil {
			return err
		}
		if _, err := stable(n, 60*time.Second); err != nil {
			return err
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	fmt.Printf("rebalance      %d-member group, one member joins: median %v (runs %v; heartbeat interval 100ms, cooperative-sticky)\n",
		10, times[len(times)/2].Round(time.Millisecond), times)
	return nil
}
