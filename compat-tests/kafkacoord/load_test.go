package kafkacoord

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/faultproxy"
)

// TestCoordinatorLoadInProgress: when a group's coordinator moves, the
// new leader of its __consumer_offsets partition loads the partition's
// groups from ZooKeeper (made slow here: its ZooKeeper connection goes
// through a proxy that delays every chunk). While it loads, the group's
// requests answer COORDINATOR_LOAD_IN_PROGRESS at once instead of waiting
// on ZooKeeper (OffsetFetch, JoinGroup, OffsetCommit, DescribeGroups),
// a heartbeat NONE, as Kafka; a fetch retried reads the committed
// offsets once the load ends.
func TestCoordinatorLoadInProgress(t *testing.T) {
	var mu sync.Mutex
	var proxies []*faultproxy.Proxy // broker id i+1's ZooKeeper proxy
	cl := kafkaenv.StartCluster(t, 2, settings(1), kafkaenv.Configure(func(c *broker.Config) {
		c.Groups.OffsetsTopicReplicationFactor = 2
		hostport, chroot, _ := strings.Cut(c.ZooKeeperConnect, "/")
		p, err := faultproxy.New(hostport)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		c.ZooKeeperConnect = p.Addr() + "/" + chroot
		mu.Lock()
		proxies = append(proxies, p) // brokers start one after the other, ids 1, 2
		mu.Unlock()
	}))
	kc := client(t, cl, kgo.RetryTimeout(90*time.Second))
	adm := kadm.NewClient(kc)
	ctx := ctxT(t)
	const group = "loading"
	coord := coordinatorOf(t, kc, group)
	if r, err := adm.CreateTopic(ctx, 6, 2, nil, "lt"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	offs := kadm.Offsets{}
	for p := int32(0); p < 6; p++ {
		offs.Add(kadm.Offset{Topic: "lt", Partition: p, At: 10 + int64(p), LeaderEpoch: -1})
	}
	waitFor(t, 30*time.Second, "the commit", func() bool {
		r, err := adm.CommitOffsets(ctx, group, offs)
		return err == nil && r.Ok()
	})
	waitFor(t, 30*time.Second, "both replicas of __consumer_offsets-0 in sync", func() bool {
		m, err := adm.Metadata(ctx, "__consumer_offsets")
		if err != nil {
			return false
		}
		d, ok := m.Topics["__consumer_offsets"]
		return ok && len(d.Partitions) == 1 && len(d.Partitions[0].ISR) == 2
	})

	other := 3 - coord
	proxies[other-1].SetDelay(150 * time.Millisecond)
	cl.Broker(coord).Stop()
	to := kc.Broker(int(other))
	fetch := func() int16 {
		r := kmsg.NewPtrOffsetFetchRequest()
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = group
		r.Groups = append(r.Groups, rg)
		resp, err := to.Request(ctx, r)
		if err != nil {
			return -2
		}
		fr := resp.(*kmsg.OffsetFetchResponse)
		if len(fr.Groups) != 1 {
			t.Fatalf("offset fetch: %+v", fr)
		}
		return fr.Groups[0].ErrorCode
	}
	waitFor(t, 90*time.Second, "COORDINATOR_LOAD_IN_PROGRESS from the new coordinator", func() bool {
		switch code := fetch(); code {
		case kerr.CoordinatorLoadInProgress.Code:
			return true
		case 0:
			t.Fatal("the new coordinator served the group without answering COORDINATOR_LOAD_IN_PROGRESS while loading it")
		}
		return false
	})

	// While it loads, every group request answers at once.
	start := time.Now()
	codes := map[string]int16{}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = group, "consumer", 3000, 3000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}}}
	if r, err := to.Request(ctx, join); err == nil {
		codes["join"] = r.(*kmsg.JoinGroupResponse).ErrorCode
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = group, "someone", 1
	if r, err := to.Request(ctx, hb); err == nil {
		codes["heartbeat"] = r.(*kmsg.HeartbeatResponse).ErrorCode
	}
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = group, -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "lt", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 99}}}}
	if r, err := to.Request(ctx, oc); err == nil {
		codes["commit"] = r.(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{group}
	if r, err := to.Request(ctx, dg); err == nil {
		codes["describe"] = r.(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode
	}
	if code := fetch(); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("the load ended while the requests were sent (fetch %d, %v after): the proxy delay is too short", code, time.Since(start))
	}
	t.Logf("while loading (%v): %v", time.Since(start), codes)
	want := map[string]int16{"join": kerr.CoordinatorLoadInProgress.Code, "heartbeat": 0,
		"commit": kerr.CoordinatorLoadInProgress.Code, "describe": kerr.CoordinatorLoadInProgress.Code}
	for k, w := range want {
		if got, ok := codes[k]; !ok || got != w {
			t.Errorf("%s while loading: %d (answered: %v), want %d", k, got, ok, w)
		}
	}

	// Retried, the fetch gets the committed offsets once loaded.
	proxies[other-1].SetDelay(0)
	var fr *kmsg.OffsetFetchResponse
	waitFor(t, 60*time.Second, "the committed offsets from the new coordinator", func() bool {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Groups = []kmsg.OffsetFetchRequestGroup{{Group: group}}
		resp, err := to.Request(ctx, r)
		if err != nil {
			return false
		}
		fr = resp.(*kmsg.OffsetFetchResponse)
		return fr.Groups[0].ErrorCode == 0
	})
	got := map[int32]int64{}
	for _, ft := range fr.Groups[0].Topics {
		for _, fp := range ft.Partitions {
			if ft.Topic == "lt" {
				got[fp.Partition] = fp.Offset
			}
		}
	}
	for p := int32(0); p < 6; p++ {
		if got[p] != 10+int64(p) {
			t.Errorf("lt-%d: committed %d, want %d (all: %v)", p, got[p], 10+p, got)
		}
	}
}
