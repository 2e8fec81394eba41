package broker

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkClient is the broker's ZooKeeper session: a go-zookeeper connection
// with the chroot of zookeeper.connect applied to every path (go-zookeeper
// has no chroot support of its own).
type zkClient struct {
	conn   *zk.Conn
	events <-chan zk.Event
	chroot string // "" or "/a/b"
	log    *slog.Logger
}

var openACL = zk.WorldACL(zk.PermAll)

// zkLogger routes go-zookeeper's log lines to slog at debug level.
type zkLogger struct{ log *slog.Logger }

func (l zkLogger) Printf(format string, args ...any) {
	l.log.Debug("zookeeper client: " + fmt.Sprintf(format, args...))
}

// dialZK connects to "host:port,...[/chroot]" and waits for a session.
func dialZK(ctx context.Context, connect string, timeout time.Duration, log *slog.Logger) (*zkClient, error) {
	servers, chroot := connect, ""
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		servers, chroot = connect[:i], strings.TrimSuffix(connect[i:], "/")
	}
	conn, events, err := zk.Connect(strings.Split(servers, ","), timeout,
		zk.WithLogger(zkLogger{log}), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	z := &zkClient{conn: conn, events: events, chroot: chroot, log: log}
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return z, z.ensureChroot()
			}
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("connecting to ZooKeeper %s: %w", connect, ctx.Err())
		}
	}
}

// ensureChroot creates the chroot path, as Kafka does on first start.
func (z *zkClient) ensureChroot() error {
	if z.chroot == "" {
		return nil
	}
	p := ""
	for _, part := range strings.Split(z.chroot[1:], "/") {
		p += "/" + part
		if _, err := z.conn.Create(p, nil, 0, openACL); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("creating chroot %s: %w", z.chroot, err)
		}
	}
	return nil
}

func (z *zkClient) path(p string) string { return z.chroot + p }

func (z *zkClient) get(p string) ([]byte, *zk.Stat, error) { return z.conn.Get(z.path(p)) }

func (z *zkClient) getW(p string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	return z.conn.GetW(z.path(p))
}

func (z *zkClient) children(p string) ([]string, error) {
	c, _, err := z.conn.Children(z.path(p))
	return c, err
}

func (z *zkClient) childrenW(p string) ([]string, <-chan zk.Event, error) {
	c, _, ch, err := z.conn.ChildrenW(z.path(p))
	return c, ch, err
}

func (z *zkClient) create(p string, data []byte, flags int32) error {
	_, err := z.conn.Create(z.path(p), data, flags, openACL)
	return err
}

func (z *zkClient) set(p string, data []byte, version int32) (*zk.Stat, error) {
	return z.conn.Set(z.path(p), data, version)
}

func (z *zkClient) exists(p string) (bool, error) {
	ok, _, err := z.conn.Exists(z.path(p))
	return ok, err
}

// ensurePersistent creates p (not its parents) if missing.
func (z *zkClient) ensurePersistent(p string) error {
	if err := z.create(p, nil, 0); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("create %s: %w", p, err)
	}
	return nil
}

// deleteRecursive deletes p and everything under it; a missing node is
// not an error.
func (z *zkClient) deleteRecursive(p string) error {
	kids, err := z.children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := z.deleteRecursive(p + "/" + k); err != nil {
			return err
		}
	}
	if err := z.conn.Delete(z.path(p), -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

// multi runs ops (whose paths are chroot-relative) atomically.
func (z *zkClient) multi(ops ...any) error {
	for i, op := range ops {
		switch o := op.(type) {
		case *zk.CreateRequest:
			o.Path = z.path(o.Path)
			if o.Acl == nil {
				o.Acl = openACL
			}
		case *zk.SetDataRequest:
			o.Path = z.path(o.Path)
		case *zk.CheckVersionRequest:
			o.Path = z.path(o.Path)
		case *zk.DeleteRequest:
			o.Path = z.path(o.Path)
		default:
			return fmt.Errorf("multi: unsupported op %T at %d", op, i)
		}
	}
	res, err := z.conn.Multi(ops...)
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Error != nil {
			return r.Error
		}
	}
	return nil
}

func (z *zkClient) close() { z.conn.Close() }

// Kafka's persistent top-level paths (KafkaZkClient.createTopLevelPaths).
var kafkaPersistentPaths = []string{
	"/consumers", "/brokers", "/brokers/ids", "/brokers/topics", "/brokers/seqid",
	"/config", "/config/changes", "/config/clients", "/config/brokers", "/config/topics",
	"/config/users", "/admin", "/admin/delete_topics", "/isr_change_notification",
	"/latest_producer_id_block", "/log_dir_event_notification", "/cluster",
}

// Znode contents, in Apache Kafka's ZooKeeper-mode JSON shapes.

type clusterIDZNode struct {
	Version string `json:"version"`
	ID      string `json:"id"`
}

type brokerZNode struct {
	ListenerSecurityProtocolMap map[string]string `json:"listener_security_protocol_map"`
	Endpoints                   []string          `json:"endpoints"`
	JMXPort                     int               `json:"jmx_port"`
	Host                        string            `json:"host"`
	Timestamp                   string            `json:"timestamp"`
	Port                        int               `json:"port"`
	Version                     int               `json:"version"`
}

type topicZNode struct {
	Partitions       map[string][]int32 `json:"partitions"`
	TopicID          string             `json:"topic_id,omitempty"`
	AddingReplicas   map[string][]int32 `json:"adding_replicas"`
	RemovingReplicas map[string][]int32 `json:"removing_replicas"`
	Version          int                `json:"version"`
}

type partitionStateZNode struct {
	ControllerEpoch int32   `json:"controller_epoch"`
	Leader          int32   `json:"leader"`
	Version         int     `json:"version"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	ISR             []int32 `json:"isr"`
}

type controllerZNode struct {
	Version   int    `json:"version"`
	BrokerID  int32  `json:"brokerid"`
	Timestamp string `json:"timestamp"`
}

type configZNode struct {
	Version int               `json:"version"`
	Config  map[string]string `json:"config"`
}

type producerIDBlockZNode struct {
	Version    int    `json:"version"`
	Broker     int32  `json:"broker"`
	BlockStart string `json:"block_start"`
	BlockEnd   string `json:"block_end"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own static types are marshalled
	}
	return b
}

func nowMillisString() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }

// newUUID returns a random Kafka Uuid (never all zeros).
func newUUID() [16]byte {
	var u [16]byte
	for u == ([16]byte{}) {
		_, _ = rand.Read(u[:])
	}
	return u
}

// uuidString is Kafka's Uuid.toString: URL-safe base64 without padding.
func uuidString(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

func parseUUID(s string) ([16]byte, error) {
	var u [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("invalid topic id %q", s)
	}
	copy(u[:], b)
	return u, nil
}

// encodeTopicZNode builds /brokers/topics/{topic}.
func encodeTopicZNode(id [16]byte, replicas [][]int32) []byte {
	z := topicZNode{Version: 3, Partitions: map[string][]int32{},
		AddingReplicas: map[string][]int32{}, RemovingReplicas: map[string][]int32{}, TopicID: uuidString(id)}
	for p, r := range replicas {
		z.Partitions[strconv.Itoa(p)] = r
	}
	return mustJSON(z)
}

// decodeTopicZNode parses /brokers/topics/{topic}: the replica lists by
// partition and the topic id (zero when a pre-2.8 Kafka wrote it).
func decodeTopicZNode(data []byte) ([16]byte, [][]int32, error) {
	var z topicZNode
	var id [16]byte
	if err := json.Unmarshal(data, &z); err != nil {
		return id, nil, err
	}
	if z.TopicID != "" {
		var err error
		if id, err = parseUUID(z.TopicID); err != nil {
			return id, nil, err
		}
	}
	replicas := make([][]int32, len(z.Partitions))
	for k, r := range z.Partitions {
		p, err := strconv.Atoi(k)
		if err != nil || p < 0 || p >= len(replicas) {
			return id, nil, fmt.Errorf("partition %q is not in 0..%d", k, len(replicas)-1)
		}
		replicas[p] = r
	}
	return id, replicas, nil
}

func topicPath(t string) string            { return "/brokers/topics/" + t }
func partitionsPath(t string) string       { return "/brokers/topics/" + t + "/partitions" }
func partitionPath(t string, p int) string { return partitionsPath(t) + "/" + strconv.Itoa(p) }
func statePath(t string, p int) string     { return partitionPath(t, p) + "/state" }
func topicConfigPath(t string) string      { return "/config/topics/" + t }
func deleteTopicPath(t string) string      { return "/admin/delete_topics/" + t }
func brokerPath(id int32) string           { return "/brokers/ids/" + strconv.Itoa(int(id)) }
