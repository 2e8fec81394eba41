package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zkafka/zkafka/broker/zkmeta"
)

// cluster is the broker's cache of the metadata in ZooKeeper. Readers take
// mu for reading and get immutable *topic values; a change builds a new
// *topic and swaps it in.
type cluster struct {
	mu         sync.RWMutex
	topics     map[string]*topic
	byID       map[[16]byte]*topic
	brokers    map[int32]brokerInfo
	controller int32 // -1 when unknown

	// applyMu serializes topic changes (opening and closing partitions,
	// which do IO); it is held without mu and taken before it.
	applyMu sync.Mutex
	// reloadMu serializes the reloads of one topic, each a read of
	// ZooKeeper and its apply, so that a reload never applies what it read
	// before another reload of the topic (a LeaderAndIsr's, a config
	// change's, a watch's) read and applied a newer state: the replicas and
	// states of the older read would replace the newer ones. Reloads of
	// different topics mostly proceed side by side: a topic's lock is
	// reloadMu[reloadStripe(name)]. Taken before applyMu; held across the
	// ZooKeeper reads.
	reloadMu [reloadStripes]sync.Mutex
}

// reloadStripes is how many reload locks the topics share.
const reloadStripes = 64

// reloadSeed seeds reloadStripe's hash for the life of the process.
var reloadSeed = maphash.MakeSeed()

// reloadStripe is the index of the reload lock of topic name.
func reloadStripe(name string) int {
	return int(maphash.String(reloadSeed, name) % reloadStripes)
}

// topic is one topic's metadata and the partitions this broker holds.
// Invariant: immutable once published in cluster.topics.
type topic struct {
	name         string
	id           [16]byte
	replicas     [][]int32 // by partition
	leaders      []int32
	leaderEpochs []int32
	isr          [][]int32
	// zkVersions are the state znodes' versions (-1: no state yet).
	zkVersions []int32
	overrides  map[string]string
	cfg        *topicConfig
	// parts are the partitions this broker LEADS (what handlers serve,
	// through topic.partition); nil where another broker leads.
	parts []*partition
	// local are the partitions this broker holds a replica of, leading or
	// following (topic.replica); nil elsewhere.
	local []*partition
}

type brokerInfo struct {
	id   int32
	host string
	port int32
	// endpoints are its listeners by name (endpoints.go).
	endpoints map[string]hostPort
	// rack is its broker.rack ("" for none).
	rack string
}

func (cl *cluster) init() {
	cl.topics = map[string]*topic{}
	cl.byID = map[[16]byte]*topic{}
	cl.brokers = map[int32]brokerInfo{}
	cl.controller = -1
}

func (cl *cluster) topic(name string) *topic {
	cl.mu.RLock()
	defer cl.mu.RUnlock()
	return cl.topics[name]
}

func (cl *cluster) topicByID(id [16]byte) *topic {
	cl.mu.RLock()
	defer cl.mu.RUnlock()
	return cl.byID[id]
}

func (cl *cluster) topicCount() int {
	cl.mu.RLock()
	defer cl.mu.RUnlock()
	return len(cl.topics)
}

// allTopics returns the topics sorted by name.
func (cl *cluster) allTopics() []*topic {
	cl.mu.RLock()
	out := make([]*topic, 0, len(cl.topics))
	for _, t := range cl.topics {
		out = append(out, t)
	}
	cl.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// liveBrokers returns the registered brokers sorted by id.
func (cl *cluster) liveBrokers() []brokerInfo {
	cl.mu.RLock()
	out := make([]brokerInfo, 0, len(cl.brokers))
	for _, b := range cl.brokers {
		out = append(out, b)
	}
	cl.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (cl *cluster) isLive(id int32) bool {
	cl.mu.RLock()
	defer cl.mu.RUnlock()
	_, ok := cl.brokers[id]
	return ok
}

func (cl *cluster) controllerID() int32 {
	cl.mu.RLock()
	defer cl.mu.RUnlock()
	return cl.controller
}

func (cl *cluster) setController(id int32) {
	cl.mu.Lock()
	cl.controller = id
	cl.mu.Unlock()
}

// partition returns the partition if this broker leads it, or nil: what
// produce, consumer fetch and offset lookups are served from.
func (t *topic) partition(p int32) *partition {
	if t == nil || p < 0 || int(p) >= len(t.parts) {
		return nil
	}
	return t.parts[p]
}

// replica returns the local replica of partition p, led or followed, or
// nil.
func (t *topic) replica(p int32) *partition {
	if t == nil || p < 0 || int(p) >= len(t.local) {
		return nil
	}
	return t.local[p]
}

// loadClusterID reads /cluster/id, creating it on first start.
func (b *Broker) loadClusterID() (string, error) {
	for {
		data, _, err := b.zk.Get("/cluster/id")
		if err == nil {
			var z zkmeta.ClusterIDZNode
			if err := json.Unmarshal(data, &z); err != nil || z.ID == "" {
				return "", fmt.Errorf("bad /cluster/id %q", data)
			}
			return z.ID, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return "", err
		}
		z := zkmeta.ClusterIDZNode{Version: "1", ID: zkmeta.UUIDString(zkmeta.NewUUID())}
		if err := b.zk.Create("/cluster/id", zkmeta.MustJSON(z), 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return "", err
		}
	}
}

// loadAllTopics reads every topic under /brokers/topics and applies it.
func (b *Broker) loadAllTopics() error {
	names, err := b.zk.Children("/brokers/topics")
	if err != nil {
		return err
	}
	return b.syncTopics(names)
}

// syncTopics makes the cache match names: loads the new topics, drops the
// ones gone (deleting their local data).
func (b *Broker) syncTopics(names []string) error {
	want := map[string]bool{}
	var errs []error
	for _, n := range names {
		want[n] = true
		if b.cluster.topic(n) == nil {
			if err := b.reloadTopic(n); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, t := range b.cluster.allTopics() {
		if !want[t.name] {
			b.dropTopic(t.name)
		}
	}
	return errors.Join(errs...)
}

// reloadTopic reads one topic from ZooKeeper and applies it; a topic that
// no longer exists is dropped.
func (b *Broker) reloadTopic(name string) error {
	mu := &b.cluster.reloadMu[reloadStripe(name)]
	mu.Lock()
	defer mu.Unlock()
	t, err := b.readTopic(name)
	if errors.Is(err, zk.ErrNoNode) {
		b.dropTopic(name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("loading topic %s: %w", name, err)
	}
	return b.applyTopic(t)
}

// topicReadTries bounds readTopic's reads of a topic whose znode keeps
// changing under them.
const topicReadTries = 10

// afterTopicZnodeRead, when set (tests), runs between readTopicOnce's read
// of the topic znode and its reads of the partition states.
var afterTopicZnodeRead func(name string)

// readTopic reads a topic's assignment, partition states and config as of
// one moment. The controller writes a reassignment's replicas (the topic
// znode) and its new leader epoch (the state znodes) in one multi, but
// they are read one after the other: a read that straddles the multi
// would pair the old replicas with the new epoch, and a leader that took
// that epoch with them would not know the new replicas as followers until
// it read the topic again (makeLeaderLocked). So the topic znode's
// version is read again after the states, and the read is done over when
// the topic znode changed meanwhile.
func (b *Broker) readTopic(name string) (*topic, error) {
	for try := 0; try < topicReadTries; try++ {
		t, version, err := b.readTopicOnce(name)
		if err == nil {
			var now int32
			if now, err = b.topicVersion(name); err == nil && now == version {
				return t, nil
			}
		}
		if err != nil && !errors.Is(err, zk.ErrBadVersion) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s changed under %d reads", zkmeta.TopicPath(name), topicReadTries)
}

// topicVersion is the topic znode's version.
func (b *Broker) topicVersion(name string) (int32, error) {
	_, st, err := b.zk.Get(zkmeta.TopicPath(name))
	if err != nil {
		return 0, err
	}
	return st.Version, nil
}

// readTopicOnce is one read of readTopic's; version is the topic znode's.
func (b *Broker) readTopicOnce(name string) (*topic, int32, error) {
	data, st, err := b.zk.Get(zkmeta.TopicPath(name))
	if err != nil {
		return nil, 0, err
	}
	id, replicas, err := zkmeta.DecodeTopicZNode(data)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", zkmeta.TopicPath(name), err)
	}
	version := st.Version
	if id == ([16]byte{}) {
		// Written by a Kafka older than 2.8; Kafka's controller adds an id
		// (ErrBadVersion: the znode changed since; readTopic reads again).
		id = zkmeta.NewUUID()
		if st, err = b.zk.Set(zkmeta.TopicPath(name), zkmeta.EncodeTopicZNode(id, replicas), st.Version); err != nil {
			return nil, 0, err
		}
		version = st.Version
	}
	if afterTopicZnodeRead != nil {
		afterTopicZnodeRead(name)
	}
	t := &topic{name: name, id: id, replicas: replicas}
	for p := range replicas {
		leader, epoch, isr, version := b.readState(name, p, replicas[p])
		t.leaders = append(t.leaders, leader)
		t.leaderEpochs = append(t.leaderEpochs, epoch)
		t.isr = append(t.isr, isr)
		t.zkVersions = append(t.zkVersions, version)
	}
	t.overrides = map[string]string{}
	if data, _, err := b.zk.Get(zkmeta.TopicConfigPath(name)); err == nil {
		var z zkmeta.ConfigZNode
		if json.Unmarshal(data, &z) == nil && z.Config != nil {
			t.overrides = z.Config
		}
	}
	t.cfg = effectiveConfig(b.topicDefaults(), t.overrides)
	return t, version, nil
}

// readState reads a partition's leader state. Without one (the controller
// has not written it yet) the partition has no leader: clients are told
// LEADER_NOT_AVAILABLE, as Kafka's brokers tell them until the controller's
// LeaderAndIsr arrives, and nothing is opened before the state exists
// (version -1).
func (b *Broker) readState(name string, p int, replicas []int32) (leader, epoch int32, isr []int32, version int32) {
	data, st, err := b.zk.Get(zkmeta.StatePath(name, p))
	var s zkmeta.PartitionStateZNode
	if err == nil && json.Unmarshal(data, &s) == nil {
		return s.Leader, s.LeaderEpoch, s.ISR, st.Version
	}
	return -1, 0, nil, -1
}

// applyTopic publishes t, opening the partitions this broker holds a
// replica of and carrying over the ones already open, and gives each its
// role from its state znode: leader (served through t.parts) or follower
// (fetched by b.fetchers). It is the one place where a partition's role
// changes.
func (b *Broker) applyTopic(t *topic) error {
	b.cluster.applyMu.Lock()
	defer b.cluster.applyMu.Unlock()
	old := b.cluster.topic(t.name)
	if old != nil && old.id != t.id {
		b.dropTopicLocked(t.name)
		old = nil
	}
	t.parts = make([]*partition, len(t.replicas))
	t.local = make([]*partition, len(t.replicas))
	now := time.Now()
	var errs []error
	var err error
	for p := range t.replicas {
		if !slices.Contains(t.replicas[p], b.cfg.BrokerID) || t.zkVersions[p] < 0 {
			continue
		}
		part := old.replica(int32(p))
		if part != nil {
			part.setConfig(t.cfg)
		} else if part, err = b.openLocalPartition(t, int32(p)); err != nil {
			errs = append(errs, err)
			continue
		}
		t.local[p] = part
		st := partState{leader: t.leaders[p], epoch: t.leaderEpochs[p], isr: t.isr[p], replicas: t.replicas[p], zkVersion: t.zkVersions[p]}
		if err := part.applyState(st, now); err != nil {
			errs = append(errs, fmt.Errorf("%s-%d: leader %d epoch %d: %w", t.name, p, st.leader, st.epoch, err))
		}
		b.followOrNot(part)
		if part.isLeader() {
			t.parts[p] = part
		}
	}
	b.cluster.mu.Lock()
	b.cluster.topics[t.name] = t
	b.cluster.byID[t.id] = t
	b.cluster.mu.Unlock()
	if t.name == offsetsTopic && b.groups != nil {
		b.groups.offsetsLeadershipChanged(t)
	}
	if t.name == transactionTopic && b.txns != nil {
		b.txns.leadershipChanged(t)
	}
	if old != nil {
		// Replicas this broker no longer holds (a reassignment) are
		// closed; their data stays.
		for p, part := range old.local {
			if part != nil && t.replica(int32(p)) != part {
				b.unfollow(part)
				if err := part.close(); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// openLocalPartition opens a partition's log, in the log dir that already
// holds it or else in the one with the fewest partitions. A directory left
// by an older topic of the same name (another topic id in its
// partition.metadata) is removed first.
func (b *Broker) openLocalPartition(t *topic, p int32) (*partition, error) {
	dir := b.pickLogDir(t.name, p)
	if err := checkPartitionMetadata(dir, t.id); err != nil {
		b.log.Warn("removing partition directory of an older topic with the same name", "dir", dir, "reason", err)
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	part, err := openReplica(dir, t.name, p, t.id, b.cfg.BrokerID, t.cfg, b.log)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	part.onISRChange = b.isrChanged
	part.setHighWatermark(b.checkpointedHW(dir, t.name, p))
	if err := writePartitionMetadata(dir, t.id); err != nil {
		part.close()
		return nil, err
	}
	return part, nil
}

func (b *Broker) pickLogDir(name string, p int32) string {
	best, bestN := "", -1
	for _, d := range b.cfg.LogDirs {
		dir := partitionDir(d, name, p)
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		ents, _ := os.ReadDir(d)
		if bestN < 0 || len(ents) < bestN {
			best, bestN = d, len(ents)
		}
	}
	return partitionDir(best, name, p)
}

// partition.metadata is Kafka's per-partition file naming the topic id.
func writePartitionMetadata(dir string, id [16]byte) error {
	path := filepath.Join(dir, "partition.metadata")
	want := "version: 0\ntopic_id: " + zkmeta.UUIDString(id) + "\n"
	if cur, err := os.ReadFile(path); err == nil && string(cur) == want {
		return nil
	}
	return os.WriteFile(path, []byte(want), 0o644)
}

func checkPartitionMetadata(dir string, id [16]byte) error {
	data, err := os.ReadFile(filepath.Join(dir, "partition.metadata"))
	if err != nil {
		return nil // new, or written before partition.metadata existed
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "topic_id: "); ok && strings.TrimSpace(v) != zkmeta.UUIDString(id) {
			return fmt.Errorf("directory belongs to topic id %s, not %s", strings.TrimSpace(v), zkmeta.UUIDString(id))
		}
	}
	return nil
}

// dropTopic forgets a deleted topic and deletes its local partitions.
func (b *Broker) dropTopic(name string) {
	b.cluster.applyMu.Lock()
	defer b.cluster.applyMu.Unlock()
	b.dropTopicLocked(name)
}

func (b *Broker) dropTopicLocked(name string) {
	b.cluster.mu.Lock()
	t := b.cluster.topics[name]
	if t != nil {
		delete(b.cluster.topics, name)
		delete(b.cluster.byID, t.id)
	}
	b.cluster.mu.Unlock()
	if t == nil {
		return
	}
	b.metrics.forgetTopic(name)
	for _, part := range t.local {
		if part == nil {
			continue
		}
		b.unfollow(part)
		part.close()
		if err := os.RemoveAll(part.dir); err != nil {
			b.log.Error("deleting partition directory", "dir", part.dir, "err", err)
		}
		b.cleaner.forget(part)
	}
	b.log.Info("topic deleted", "topic", name)
	if b.groups != nil {
		b.groups.topicDeleted(name)
	}
}

// closePartitions closes every open partition (Shutdown).
func (b *Broker) closePartitions() {
	b.cluster.applyMu.Lock()
	defer b.cluster.applyMu.Unlock()
	for _, t := range b.cluster.allTopics() {
		for _, part := range t.local {
			if part != nil {
				if err := part.close(); err != nil {
					b.log.Warn("closing partition", "topic", part.topic, "partition", part.index, "err", err)
				}
			}
		}
	}
}
