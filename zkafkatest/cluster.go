package zkafkatest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster is a running ZooKeeper (standalone or an ensemble) and the
// Kafka brokers on it, all in this process on 127.0.0.1, each member
// behind its links (see Cut). Its methods are safe for concurrent use.
type Cluster struct {
	cfg   config
	dir   string
	owned bool // dir is ours to remove at Close
	log   *slog.Logger
	net   *network
	hooks hooks
	admin *zk.Conn // the harness's session (links no fault touches)

	mu      sync.Mutex // serializes faults and Close
	zks     []*zkServer
	brokers []*brokerServer
	closed  bool
}

// StartCluster starts a cluster for the test (by default one standalone
// ZooKeeper and one broker, broker.id 1), with its data in t.TempDir(),
// and closes it with t.Cleanup. A start that fails fails the test.
func StartCluster(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	opts = append([]Option{DataDir(t.TempDir())}, opts...)
	cl, err := Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cl.Close(); err != nil {
			t.Errorf("zkafkatest: closing the cluster: %v", err)
		}
	})
	return cl
}

// StartZooKeeper is StartCluster without brokers: ZooKeeper only
// (standalone, or Ensemble(n)).
func StartZooKeeper(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	return StartCluster(t, append(opts, Brokers(0))...)
}

// Start starts a cluster outside a test; Close stops it. Without DataDir
// its data goes to a new temporary directory that Close removes.
func Start(opts ...Option) (*Cluster, error) {
	c := &Cluster{cfg: config{brokers: 1, firstBroker: 1, ensemble: 1, sessionLimit: 6 * time.Second}, net: newNetwork()}
	for _, o := range opts {
		o(&c.cfg)
	}
	if c.cfg.ensemble < 1 || c.cfg.brokers < 0 {
		return nil, fmt.Errorf("zkafkatest: %d ZooKeeper servers and %d brokers", c.cfg.ensemble, c.cfg.brokers)
	}
	c.log = c.cfg.log
	if c.log == nil {
		c.log = defaultLogger()
	}
	c.dir = c.cfg.dataDir
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "zkafkatest-")
		if err != nil {
			return nil, err
		}
		c.dir, c.owned = dir, true
	}
	c.hooks.init()
	if err := c.start(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start() error {
	if c.cfg.externalZK == "" {
		if err := c.newZKServers(c.cfg.ensemble); err != nil {
			return err
		}
		if err := c.startZKs(); err != nil {
			return err
		}
	}
	if err := c.adminSession(); err != nil {
		return err
	}
	if err := c.newBrokers(); err != nil {
		return err
	}
	for _, b := range c.brokers {
		if err := c.startBroker(b); err != nil {
			return err
		}
	}
	if len(c.brokers) > 1 {
		if err := c.waitBrokers(30 * time.Second); err != nil {
			return err
		}
	}
	return c.createTopics(c.cfg.topics)
}

// startZKs starts the ZooKeeper servers together (an ensemble member
// waits for a quorum only once it serves, so one at a time is fine).
func (c *Cluster) startZKs() error {
	for _, s := range c.zks {
		if err := c.startZK(s); err != nil {
			return err
		}
	}
	return nil
}

// Close removes every rule, heals every link, stops every running member
// (gracefully) and the links, and removes the data if Start made its
// directory.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.hooks.clear()
	c.HealAll() // a paused or cut member would make its graceful stop wait
	var errs []error
	for i := len(c.brokers) - 1; i >= 0; i-- {
		if b := c.brokers[i]; b.b != nil {
			errs = append(errs, c.stopBroker(b, false))
		}
	}
	if c.admin != nil {
		c.admin.Close()
	}
	for i := len(c.zks) - 1; i >= 0; i-- {
		if z := c.zks[i]; z.srv != nil {
			errs = append(errs, c.stopZK(z, false))
		}
	}
	c.net.close()
	if c.owned {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	return errors.Join(errs...)
}

// ZooKeeper is the ZooKeeper connect string clients use: every server's
// address, comma-separated (or ExternalZooKeeper's), without a chroot
// (the brokers keep their metadata at the root, as Kafka does by default,
// or under Chroot()).
func (c *Cluster) ZooKeeper() string {
	if c.cfg.externalZK != "" {
		return c.cfg.externalZK
	}
	var out []string
	for _, z := range c.zks {
		out = append(out, c.net.get(Clients, ZooKeeperServer(z.id)).addr())
	}
	return strings.Join(out, ",")
}

// Chroot is where the brokers keep their metadata in ZooKeeper ("" for
// the root; see the Chroot option).
func (c *Cluster) Chroot() string { return c.cfg.chroot }

// ZooKeeperServers is every ZooKeeper server's address, for
// zk.Connect.
func (c *Cluster) ZooKeeperServers() []string { return strings.Split(c.ZooKeeper(), ",") }

// Bootstrap is the brokers' addresses, comma-separated
// (bootstrap.servers, kcat -b).
func (c *Cluster) Bootstrap() string { return strings.Join(c.Seeds(), ",") }

// Seeds is every broker's address, for kgo.SeedBrokers. An address stays
// the broker's across restarts.
func (c *Cluster) Seeds() []string {
	var out []string
	for _, b := range c.brokers {
		out = append(out, c.net.get(Clients, Broker(b.id)).addr())
	}
	return out
}

// Addr is the address clients reach m at (the link from Clients).
func (c *Cluster) Addr(m Member) (string, error) {
	k := c.net.get(Clients, m)
	if k == nil {
		return "", fmt.Errorf("zkafkatest: no member %s", m)
	}
	return k.addr(), nil
}

// BrokerIDs is the brokers' ids, in order.
func (c *Cluster) BrokerIDs() []int32 {
	var out []int32
	for _, b := range c.brokers {
		out = append(out, b.id)
	}
	return out
}

// DataDir is the directory holding every member's data.
func (c *Cluster) DataDir() string { return c.dir }

// Links lists every link between members and its state.
func (c *Cluster) Links() []LinkState { return c.net.states() }

// client is a kgo client of the cluster for the harness's own requests.
func (c *Cluster) client() (*kgo.Client, error) {
	return kgo.NewClient(kgo.SeedBrokers(c.Seeds()...), kgo.ClientID(harnessClientID), kgo.MetadataMinAge(50*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
}

// waitBrokers waits until every running broker's metadata lists every
// running broker: their views of /brokers/ids follow watches.
func (c *Cluster) waitBrokers(limit time.Duration) error {
	want := 0
	for _, b := range c.brokers {
		if b.b != nil {
			want++
		}
	}
	for _, b := range c.brokers {
		if b.b == nil {
			continue
		}
		err := c.onBroker(b.id, func(adm *kadm.Client) error {
			return poll(limit, func() (bool, error) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				bs, err := adm.ListBrokers(ctx)
				return err == nil && len(bs) == want, err
			})
		})
		if err != nil {
			return fmt.Errorf("zkafkatest: broker %d never listed %d brokers: %w", b.id, want, err)
		}
	}
	return nil
}

// poll calls done until it reports true or limit passes; the error is
// the last one done returned.
func poll(limit time.Duration, done func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := done()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("timed out")
			}
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// defaultLogger discards, or with ZKAFKA_TEST_LOG set writes everything
// to stderr.
func defaultLogger() *slog.Logger {
	if os.Getenv("ZKAFKA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// onBroker runs fn with an admin client that talks to broker id only.
func (c *Cluster) onBroker(id int32, fn func(*kadm.Client) error) error {
	addr, err := c.Addr(Broker(id))
	if err != nil {
		return err
	}
	kc, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(harnessClientID), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		return err
	}
	defer kc.Close()
	return fn(kadm.NewClient(kc))
}
