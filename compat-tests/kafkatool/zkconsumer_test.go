package kafkatool

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
	"github.com/zkafka/zkafka/internal/faultproxy"
)

// zkMember is one running ZooKeeper-coordinated consumer.
type zkMember struct {
	out    *safeBuffer
	cancel context.CancelFunc
	done   chan error
}

func startZKMember(t *testing.T, zkAddr, chroot, topic string) *zkMember {
	ctx, cancel := context.WithCancel(context.Background())
	m := &zkMember{out: new(safeBuffer), cancel: cancel, done: make(chan error, 1)}
	go func() {
		_, err := runCtx(ctx, "", m.out, "consume", topic, "--zookeeper", zkAddr+chroot, "--group", "zg",
			"--from", "beginning", "--format", `%p %s\n`, "--zookeeper-session-timeout", "3s")
		m.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-m.done:
		case <-time.After(15 * time.Second):
			t.Error("a consumer did not stop within 15 s of its context")
		}
	})
	return m
}

// owners reads /consumers/zg/owners/{topic}: partition -> member id.
func owners(t *testing.T, z *zk.Conn, e *kafkaenv.Env, topic string) map[int32]string {
	base := e.Path("/consumers/zg/owners/" + topic)
	ps, _, err := z.Children(base)
	if err != nil {
		return nil
	}
	out := map[int32]string{}
	for _, p := range ps {
		data, _, err := z.Get(base + "/" + p)
		if err != nil {
			continue
		}
		n, _ := strconv.Atoi(p)
		out[int32(n)] = string(data)
	}
	return out
}

func members(z *zk.Conn, e *kafkaenv.Env) []string {
	ids, _, _ := z.Children(e.Path("/consumers/zg/ids"))
	sort.Strings(ids)
	return ids
}

// balanced reports whether all six partitions are owned, two... per live
// member: each of want members owns 6/len(want), and nobody else owns any.
func balanced(own map[int32]string, want []string) bool {
	if len(own) != 6 {
		return false
	}
	count := map[string]int{}
	for _, o := range own {
		count[o]++
	}
	for _, w := range want {
		if count[w] != 6/len(want) {
			return false
		}
	}
	return len(count) == len(want)
}

// produceEach writes n records to each of the six partitions, values
// "tag-p-i".
func produceEach(t *testing.T, e *kafkaenv.Env, topic, tag string, n int) []string {
	c := e.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var vals []string
	for p := int32(0); p < 6; p++ {
		for i := 0; i < n; i++ {
			v := fmt.Sprintf("%s-%d-%d", tag, p, i)
			vals = append(vals, fmt.Sprintf("%d %s", p, v))
			if err := c.ProduceSync(kafkaenv.Context(t, 30*time.Second), &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return vals
}

// consumedBy counts, for each line, how many members printed it.
func consumedBy(ms ...*zkMember) map[string]int {
	out := map[string]int{}
	for _, m := range ms {
		for _, l := range strings.Split(m.out.String(), "\n") {
			if l != "" {
				out[l]++
			}
		}
	}
	return out
}

// TestZKConsumerTakeover: three ZooKeeper-coordinated consumers share six
// partitions two each; one dies without a goodbye (its connection is cut
// and its context cancelled, so its session expires); the two survivors
// take its partitions within the session timeout (plus the time to
// notice), and at no poll of the owners znodes is a partition owned by
// anyone but the members the range assignment gives it to or nobody.
func TestZKConsumerTakeover(t *testing.T) {
	e := startEnv(t)
	topic := "zkc"
	run(t, "", "topics", "create", topic, "--partitions", "6", "--bootstrap-server", e.Addr)
	z := e.ZK()

	a := startZKMember(t, kafkaenv.ZooKeeper(), e.Chroot, topic)
	b := startZKMember(t, kafkaenv.ZooKeeper(), e.Chroot, topic)
	checkFor(t, 20*time.Second, "two members registered", func() bool { return len(members(z, e)) == 2 })
	ab := members(z, e)
	px := startProxy(t, kafkaenv.ZooKeeper())
	c := startZKMember(t, px.Addr(), e.Chroot, topic)
	checkFor(t, 20*time.Second, "three members registered", func() bool { return len(members(z, e)) == 3 })
	var victim string
	for _, id := range members(z, e) {
		if id != ab[0] && id != ab[1] {
			victim = id
		}
	}
	// The member znode is the old consumer's JSON.
	data, _, err := z.Get(e.Path("/consumers/zg/ids/" + victim))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		Version      int            `json:"version"`
		Subscription map[string]int `json:"subscription"`
		Pattern      string         `json:"pattern"`
		Timestamp    string         `json:"timestamp"`
	}
	if err := json.Unmarshal(data, &reg); err != nil || reg.Version != 1 || reg.Subscription[topic] != 1 || reg.Pattern != "static" || reg.Timestamp == "" {
		t.Errorf("member znode %s: %v", data, err)
	}
	if !strings.Contains(victim, ":") || len(victim[strings.LastIndexByte(victim, ':')+1:]) != 36 {
		t.Errorf("member id %q is not hostname:UUID", victim)
	}

	// Watch the owners znodes throughout: an owner must always be a
	// registered member (a dead one only until its session expires).
	var mu sync.Mutex
	var bad []string
	seenIDs := map[string]bool{ab[0]: true, ab[1]: true, victim: true}
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			for p, o := range owners(t, z, e, topic) {
				if !seenIDs[o] {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("partition %d owned by %q", p, o))
					mu.Unlock()
				}
			}
		}
	}()

	all := []string{ab[0], ab[1], victim}
	sort.Strings(all)
	checkFor(t, 20*time.Second, "six partitions over three members", func() bool { return balanced(owners(t, z, e, topic), all) })
	before := produceEach(t, e, topic, "before", 5)
	checkFor(t, 20*time.Second, "the records before the kill consumed", func() bool {
		got := consumedBy(a, b, c)
		for _, v := range before {
			if got[v] == 0 {
				return false
			}
		}
		return true
	})
	for _, v := range before {
		if n := consumedBy(a, b, c)[v]; n != 1 {
			t.Errorf("%q consumed %d times with three stable members", v, n)
		}
	}

	// Kill the third member: cut its ZooKeeper connection, cancel it.
	killed := time.Now()
	px.Close()
	c.cancel()
	checkFor(t, 3*time.Second+15*time.Second, "the survivors own all six partitions", func() bool {
		return balanced(owners(t, z, e, topic), ab)
	})
	t.Logf("takeover %v after the kill (session timeout 3s)", time.Since(killed).Round(10*time.Millisecond))
	after := produceEach(t, e, topic, "after", 5)
	checkFor(t, 20*time.Second, "the records after the kill consumed by the survivors", func() bool {
		got := consumedBy(a, b)
		for _, v := range after {
			if got[v] == 0 {
				return false
			}
		}
		return true
	})
	for _, v := range after {
		if n := consumedBy(a, b)[v]; n != 1 {
			t.Errorf("%q consumed %d times by the survivors", v, n)
		}
	}
	close(stop)
	<-polled
	mu.Lock()
	defer mu.Unlock()
	for _, s := range bad {
		t.Error(s)
	}
	// Offsets are plain decimal text in the znodes the broker reads too.
	checkFor(t, 10*time.Second, "committed offsets 10 on every partition", func() bool {
		for p := 0; p < 6; p++ {
			d, _, err := z.Get(e.Path(fmt.Sprintf("/consumers/zg/offsets/%s/%d", topic, p)))
			if err != nil || string(d) != "10" {
				return false
			}
		}
		return true
	})
	out := run(t, "", "groups", "describe", "zg", "--zookeeper", zkSpec(e), "-o", "json")
	if !strings.Contains(out, `"total_lag": 0`) || !strings.Contains(out, `"zk_owner": "`+ab[0]) {
		t.Errorf("groups describe of the ZooKeeper group:\n%s", out)
	}
}

// TestZKConsumerRefusesBrokerGroup: a group with live members at the
// broker's coordinator is not joined through ZooKeeper.
func TestZKConsumerRefusesBrokerGroup(t *testing.T) {
	e := startEnv(t)
	run(t, "", "topics", "create", "rg", "--partitions", "1", "--bootstrap-server", e.Addr)
	cl := e.Client(kgo.ConsumerGroup("zg"), kgo.ConsumeTopics("rg"))
	ctx := kafkaenv.Context(t, 30*time.Second)
	adm := e.Admin()
	checkFor(t, 20*time.Second, "the kgo member joined", func() bool {
		pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		cl.PollFetches(pctx)
		cancel()
		gs, err := adm.DescribeGroups(ctx, "zg")
		return err == nil && len(gs["zg"].Members) == 1
	})
	err := runErr(t, "consume", "rg", "--zookeeper", zkSpec(e), "--group", "zg")
	if !strings.Contains(err.Error(), "coordinated by the broker") {
		t.Errorf("got %v", err)
	}
	// groups describe shows the live member and its assignment.
	d := decode[[]struct {
		State   string `json:"state"`
		Members []struct {
			ID string `json:"id"`
		} `json:"members"`
		Partitions []struct {
			Partition int32  `json:"partition"`
			Member    string `json:"member"`
		} `json:"partitions"`
	}](t, run(t, "", "groups", "describe", "zg", "--bootstrap-server", e.Addr, "-o", "json"))
	if len(d) != 1 || d[0].State != "Stable" || len(d[0].Members) != 1 || len(d[0].Partitions) != 1 ||
		d[0].Partitions[0].Member != d[0].Members[0].ID {
		t.Errorf("describe of a live group: %+v", d)
	}
	if err := runErr(t, "groups", "reset-offsets", "zg", "--to-earliest", "--topic", "rg", "--execute", "--bootstrap-server", e.Addr); !strings.Contains(err.Error(), "active members") {
		t.Errorf("reset of a live group: %v", err)
	}
}

// TestZKConsumerGrowsAndLeaves: when the topic gains partitions the
// members share the new ones (the watch on /brokers/topics/T), and a
// member that stops cleanly releases its partitions and deregisters at
// once, so the other takes them without waiting for a session to expire.
func TestZKConsumerGrowsAndLeaves(t *testing.T) {
	e := startEnv(t)
	topic := "grow"
	run(t, "", "topics", "create", topic, "--partitions", "2", "--bootstrap-server", e.Addr)
	z := e.ZK()
	a := startZKMember(t, kafkaenv.ZooKeeper(), e.Chroot, topic)
	startZKMember(t, kafkaenv.ZooKeeper(), e.Chroot, topic)
	checkFor(t, 20*time.Second, "two members", func() bool { return len(members(z, e)) == 2 })
	ids := members(z, e)
	spread := func(n int, want ...string) func() bool {
		return func() bool {
			own := owners(t, z, e, topic)
			count := map[string]int{}
			for _, o := range own {
				count[o]++
			}
			for _, w := range want {
				if count[w] != n/len(want) {
					return false
				}
			}
			return len(own) == n && len(count) == len(want)
		}
	}
	checkFor(t, 20*time.Second, "two partitions, one each", spread(2, ids...))
	run(t, "", "topics", "alter", topic, "--partitions", "6", "--bootstrap-server", e.Addr)
	checkFor(t, 20*time.Second, "six partitions, three each", spread(6, ids...))
	// Stop a cleanly: once its command has returned, its member znode and
	// its owner znodes are gone (released, not left to a session expiry).
	a.cancel()
	select {
	case err := <-a.done:
		if err != nil {
			t.Fatalf("a clean stop failed: %v", err)
		}
		a.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("the member did not stop")
	}
	left := members(z, e)
	if len(left) != 1 {
		t.Fatalf("after a clean stop the members are %v, want one", left)
	}
	gone := ids[0]
	if gone == left[0] {
		gone = ids[1]
	}
	for p, o := range owners(t, z, e, topic) {
		if o == gone {
			t.Errorf("partition %d still owned by the stopped member", p)
		}
	}
	checkFor(t, 20*time.Second, "the remaining member owns all six", spread(6, left[0]))
}

// TestZKConsumerRejoinsAfterItsSessionExpired: a member cut off from
// ZooKeeper for longer than its session timeout loses its member and
// owner znodes (the other member takes everything); when the network
// heals it gets a new session, registers again, and the two share the
// partitions again.
func TestZKConsumerRejoinsAfterItsSessionExpired(t *testing.T) {
	e := startEnv(t)
	topic := "rejoin"
	run(t, "", "topics", "create", topic, "--partitions", "6", "--bootstrap-server", e.Addr)
	z := e.ZK()
	startZKMember(t, kafkaenv.ZooKeeper(), e.Chroot, topic)
	checkFor(t, 20*time.Second, "one member", func() bool { return len(members(z, e)) == 1 })
	stay := members(z, e)[0]
	px := startProxy(t, kafkaenv.ZooKeeper())
	startZKMember(t, px.Addr(), e.Chroot, topic)
	checkFor(t, 20*time.Second, "two members sharing six partitions", func() bool {
		m := members(z, e)
		return len(m) == 2 && balanced(owners(t, z, e, topic), m)
	})
	px.Cut(faultproxy.Refuse)
	checkFor(t, 20*time.Second, "the cut-off member's session expired and the other owns all", func() bool {
		m := members(z, e)
		return len(m) == 1 && m[0] == stay && balanced(owners(t, z, e, topic), m)
	})
	px.Heal()
	checkFor(t, 30*time.Second, "the member back with a new session, sharing again", func() bool {
		m := members(z, e)
		return len(m) == 2 && balanced(owners(t, z, e, topic), m)
	})
}
