package kafkatool

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The ZooKeeper-coordinated consumer, as Kafka's old high-level consumer
// (ZookeeperConsumerConnector) ran, on the znodes of DESIGN.md that the
// broker's group coordinator keeps too (broker/group_store.go):
//
//	/consumers/G/ids/{id}             ephemeral, this member: hostname:UUID
//	/consumers/G/owners/T/{p}         ephemeral, the member that owns p
//	/consumers/G/offsets/T/{p}        persistent, the next offset, decimal text
//
// On every change of the members, the brokers or the topic's partitions,
// each member computes the range assignment (assign.go), releases the
// partitions it no longer gets (commit, then delete the owner znode) and
// claims the new ones by creating their owner znode. A claim that finds
// the znode taken is retried until the previous owner lets go (it
// releases on its own rebalance, or its session expires). The znode is
// the lock, so no partition ever has two owners; a member consumes only
// partitions whose owner znode it created.

// zkConsumerRetry is how often claims are retried and offsets committed.
const (
	zkConsumerRetry  = 200 * time.Millisecond
	zkCommitInterval = time.Second
)

type zkConsumer struct {
	z     *zkClient
	kc    *kgo.Client
	group string
	topic string
	id    string
	from  startOffset
	pr    *printer
	count int64 // --count; 0: no limit

	changed chan struct{} // a watch fired: rebalance
	wanted  []int32       // this member's current assignment
	owned   map[int32]bool
	next    map[int32]int64 // per owned partition: the offset after the last printed record
	saved   map[int32]int64 // per owned partition: the offset last committed
	n       int64           // records printed
}

func runZKConsumer(cmd *cobra.Command, f *connFlags, cf *consumeFlags, from startOffset, pr *printer, topic string) error {
	if cf.untilEnd {
		return errors.New("--until-end is not supported by the ZooKeeper-coordinated consumer")
	}
	ctx := cmd.Context()
	cl, err := f.open(ctx, kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := refuseBrokerGroup(ctx, f, cl, cf.group); err != nil {
		return err
	}
	c := &zkConsumer{z: cl.zk, kc: cl.kc, group: cf.group, topic: topic, from: from, pr: pr, count: cf.count,
		changed: make(chan struct{}, 1), owned: map[int32]bool{}, next: map[int32]int64{}, saved: map[int32]int64{}}
	c.id = consumerID()
	if err := c.register(); err != nil {
		return err
	}
	err = c.run(ctx)
	c.leave()
	return err
}

// refuseBrokerGroup fails when the broker coordinates the group now: two
// coordination protocols on one group would hand a partition to two
// members.
func refuseBrokerGroup(ctx context.Context, f *connFlags, cl *cluster, group string) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	// The first group request of a cluster creates __consumer_offsets:
	// COORDINATOR_NOT_AVAILABLE until its partitions have leaders.
	gs, err := cl.adm.DescribeGroups(ctx, group)
	for errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.CoordinatorLoadInProgress) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("describing group %s: %w", group, err)
		case <-time.After(100 * time.Millisecond):
		}
		gs, err = cl.adm.DescribeGroups(ctx, group)
	}
	if err != nil {
		return fmt.Errorf("describing group %s: %w", group, err)
	}
	if g, ok := gs[group]; ok && g.Err == nil && len(g.Members) > 0 {
		return fmt.Errorf("group %s is coordinated by the broker now (%s, %d members); "+
			"consume it with --bootstrap-server --group, or use another group with --zookeeper", group, g.State, len(g.Members))
	}
	return nil
}

// consumerID is hostname:UUID (a random version 4 UUID), as the old
// consumer named its members.
func consumerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s:%x-%x-%x-%x-%x", host, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (c *zkConsumer) groupPath(p string) string { return c.z.path("/consumers/" + c.group + p) }
func (c *zkConsumer) ownerPath(p int32) string {
	return c.groupPath("/owners/" + c.topic + "/" + strconv.Itoa(int(p)))
}
func (c *zkConsumer) offsetPath(p int32) string {
	return c.groupPath("/offsets/" + c.topic + "/" + strconv.Itoa(int(p)))
}

// ensurePath creates the persistent znodes of path that are missing.
func ensurePath(z *zkClient, path string) error {
	at := ""
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		at += "/" + part
		_, err := z.Create(at, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("creating %s: %w", at, err)
		}
	}
	return nil
}

// memberZNode is /consumers/G/ids/{id}, as Kafka's old consumer wrote it.
func (c *zkConsumer) memberZNode() []byte {
	b, _ := json.Marshal(map[string]any{
		"version": 1, "subscription": map[string]int{c.topic: 1}, "pattern": "static",
		"timestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)})
	return b
}

// register creates the group's parents and this member's ephemeral.
func (c *zkConsumer) register() error {
	for _, p := range []string{"/ids", "/owners/" + c.topic, "/offsets/" + c.topic} {
		if err := ensurePath(c.z, c.groupPath(p)); err != nil {
			return err
		}
	}
	_, err := c.z.Create(c.groupPath("/ids/"+c.id), c.memberZNode(), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("registering %s: %w", c.groupPath("/ids/"+c.id), err)
	}
	return nil
}

// watch turns one watch's event into a rebalance signal.
func (c *zkConsumer) watch(ev <-chan zk.Event) {
	go func() {
		if _, ok := <-ev; ok {
			select {
			case c.changed <- struct{}{}:
			default:
			}
		}
	}()
}

func (c *zkConsumer) run(ctx context.Context) error {
	if err := c.rebalance(); err != nil {
		return err
	}
	tick := time.NewTicker(zkConsumerRetry)
	defer tick.Stop()
	lastCommit := time.Now()
	for ctx.Err() == nil {
		select {
		case <-c.changed:
			if err := c.rebalance(); err != nil {
				return err
			}
		case <-c.z.sessions:
			if err := c.rebalance(); err != nil { // a new session: our ephemerals may be gone
				return err
			}
		case <-tick.C:
			c.claim()
			if time.Since(lastCommit) >= zkCommitInterval {
				c.commit()
				lastCommit = time.Now()
			}
		default:
			if done, err := c.poll(ctx); err != nil || done {
				return err
			}
		}
	}
	return nil
}

// poll prints the records of owned partitions that one short poll brings.
func (c *zkConsumer) poll(ctx context.Context) (bool, error) {
	if len(c.owned) == 0 {
		select {
		case <-ctx.Done():
		case <-time.After(zkConsumerRetry):
		}
		return false, nil
	}
	pctx, cancel := context.WithTimeout(ctx, zkConsumerRetry)
	fs := c.kc.PollFetches(pctx)
	cancel()
	if err := fetchError(fs); err != nil {
		return false, err
	}
	done := false
	fs.EachRecord(func(r *kgo.Record) {
		if done || !c.owned[r.Partition] || r.Offset < c.next[r.Partition] {
			return
		}
		c.pr.add(r)
		c.next[r.Partition] = r.Offset + 1
		c.n++
		done = c.count > 0 && c.n >= c.count
	})
	return done, c.pr.flush()
}

// rebalance reads the members, brokers and partitions (leaving watches),
// releases what is no longer this member's and claims the rest.
func (c *zkConsumer) rebalance() error {
	if ok, _, err := c.z.Exists(c.groupPath("/ids/" + c.id)); err == nil && !ok {
		if err := c.register(); err != nil { // our session expired and a new one began
			return err
		}
	}
	members, _, ev, err := c.z.ChildrenW(c.groupPath("/ids"))
	if err != nil {
		return fmt.Errorf("reading members of %s: %w", c.group, err)
	}
	c.watch(ev)
	if _, _, ev, err := c.z.ChildrenW(c.z.path("/brokers/ids")); err == nil {
		c.watch(ev)
	}
	parts, err := c.partitions()
	if err != nil {
		return err
	}
	c.wanted = rangeAssign(parts, members, c.id)
	keep := map[int32]bool{}
	for _, p := range c.wanted {
		keep[p] = true
	}
	for p := range c.owned {
		if !keep[p] || !c.stillOwner(p) {
			c.release(p)
		}
	}
	c.claim()
	return nil
}

// partitions reads the topic's partitions from /brokers/topics/T.
func (c *zkConsumer) partitions() ([]int32, error) {
	data, _, ev, err := c.z.GetW(c.z.path("/brokers/topics/" + c.topic))
	if errors.Is(err, zk.ErrNoNode) {
		c.watch(ev)
		return nil, nil // not created yet; the watch tells
	} else if err != nil {
		return nil, fmt.Errorf("reading topic %s: %w", c.topic, err)
	}
	c.watch(ev)
	var t struct {
		Partitions map[string][]int32 `json:"partitions"`
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("topic %s: %w", c.topic, err)
	}
	var out []int32
	for k := range t.Partitions {
		if n, err := strconv.ParseInt(k, 10, 32); err == nil {
			out = append(out, int32(n))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func (c *zkConsumer) stillOwner(p int32) bool {
	data, _, err := c.z.Get(c.ownerPath(p))
	return err == nil && string(data) == c.id
}

// claim tries to own every wanted partition not owned yet.
func (c *zkConsumer) claim() {
	add := map[int32]kgo.Offset{}
	for _, p := range c.wanted {
		if c.owned[p] {
			continue
		}
		_, err := c.z.Create(c.ownerPath(p), []byte(c.id), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		if err != nil {
			continue // taken: the previous owner has not let go yet; retried on the next tick
		}
		c.owned[p] = true
		at := c.committed(p)
		c.next[p], c.saved[p] = at, at
		if at >= 0 {
			add[p] = kgo.NewOffset().At(at)
		} else {
			add[p] = c.from.kgo()
			c.next[p], c.saved[p] = 0, -1
		}
	}
	if len(add) > 0 {
		c.kc.AddConsumePartitions(map[string]map[int32]kgo.Offset{c.topic: add})
	}
}

// committed returns the group's committed offset of p, -1 if none.
func (c *zkConsumer) committed(p int32) int64 {
	data, _, err := c.z.Get(c.offsetPath(p))
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// commit writes the offsets that moved since the last commit.
func (c *zkConsumer) commit() {
	for p := range c.owned {
		c.commitOne(p)
	}
}

func (c *zkConsumer) commitOne(p int32) {
	at := c.next[p]
	if at == c.saved[p] || (c.saved[p] < 0 && at == 0) {
		return
	}
	data := []byte(strconv.FormatInt(at, 10))
	_, err := c.z.Set(c.offsetPath(p), data, -1)
	if errors.Is(err, zk.ErrNoNode) {
		_, err = c.z.Create(c.offsetPath(p), data, 0, zk.WorldACL(zk.PermAll))
	}
	if err == nil {
		c.saved[p] = at
	}
}

// release stops consuming p, commits it and lets go of its owner znode.
func (c *zkConsumer) release(p int32) {
	c.kc.RemoveConsumePartitions(map[string][]int32{c.topic: {p}})
	if c.stillOwner(p) {
		c.commitOne(p)
		c.z.Delete(c.ownerPath(p), -1)
	}
	delete(c.owned, p)
	delete(c.next, p)
	delete(c.saved, p)
}

// leave commits and releases everything and deregisters, bounded in time
// (ZooKeeper may be gone: then the session's expiry does it).
func (c *zkConsumer) leave() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range c.owned {
			c.release(p)
		}
		c.z.Delete(c.groupPath("/ids/"+c.id), -1)
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
}
