package kafkaenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/zkafkatest"
)

// Env is one broker on its own chroot and data directory, stopped at the
// end of the test.
type Env struct {
	T      testing.TB
	Config broker.Config
	Chroot string // "/<prefix><random hex>"; see Path
	Addr   string // the broker's address, new at each start
	// Addrs are the addresses of every listener of Config.Listeners, in
	// order (Addrs[0] == Addr); a configuration with several listeners
	// (PLAINTEXT and SSL) gets one socket for each.
	Addrs []string
	Logs  *Logs // the broker's warnings and errors

	cl      *zkafkatest.Cluster // the broker's cluster (StartCluster's, or its own)
	running bool
	// unreachable: the controller cannot reach it (Unreachable).
	unreachable bool
	panics      atomic.Int64
}

// An Option adjusts how Start sets up a broker.
type Option func(*options)

type options struct {
	chrootPrefix string
	chroot       string // exact chroot (a cluster's brokers share one)
	mods         []func(*broker.Config)
	verboseLogs  bool
	unreachable  func(*broker.Config) bool
	cluster      *zkafkatest.Cluster // StartCluster's; nil: Start makes one
}

// Unreachable names the brokers (by their config) that the controller
// cannot reach on their inter-broker listener: they register, but never
// get UpdateMetadata, so Start and StartCluster do not wait for their
// Metadata to list themselves or the cluster.
func Unreachable(pred func(*broker.Config) bool) Option {
	return func(o *options) { o.unreachable = pred }
}

// VerboseLogs makes Logs capture the broker's INFO records too, with
// their attributes ("INFO message k=v ...").
func VerboseLogs() Option { return func(o *options) { o.verboseLogs = true } }

// ChrootPrefix names the broker's chroot prefix followed by random hex
// (default "kafka-").
func ChrootPrefix(prefix string) Option { return func(o *options) { o.chrootPrefix = prefix } }

// Chroot names the broker's exact chroot (a cluster's brokers all take
// it), for a test that writes znodes before the brokers start.
func Chroot(path string) Option { return func(o *options) { o.chroot = path } }

// RandomChroot is a fresh chroot name with prefix, for Chroot.
func RandomChroot(prefix string) string { return "/" + randName(prefix) }

// Configure applies mods to the broker's config after Start has set its data
// directory, listener, ZooKeeperConnect (ZooKeeper() + chroot) and a 6 s
// ZooKeeper session timeout.
func Configure(mods ...func(*broker.Config)) Option {
	return func(o *options) { o.mods = append(o.mods, mods...) }
}

// Start starts a broker on 127.0.0.1 port 0, waits until it accepts
// connections, and stops it when the test ends. Main must run the tests.
// The broker runs in a zkafkatest cluster on the package's ZooKeeper
// under its chroot (StartCluster's brokers share one).
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	if zkAddr == "" {
		t.Fatal("kafkaenv: no ZooKeeper; call kafkaenv.Main from TestMain")
	}
	o := options{chrootPrefix: "kafka-"}
	for _, opt := range opts {
		opt(&o)
	}
	e := &Env{T: t, Chroot: "/" + randName(o.chrootPrefix), Logs: &Logs{verbose: o.verboseLogs}}
	if o.chroot != "" {
		e.Chroot = o.chroot
	}
	e.cl = o.cluster
	if e.cl == nil {
		e.cl = zkafkatest.StartCluster(t, zkafkatest.ExternalZooKeeper(zkAddr), zkafkatest.Chroot(e.Chroot),
			zkafkatest.Brokers(0), zkafkatest.Logger(slog.New(baseHandler())))
	}
	e.Config = broker.DefaultConfig(t.TempDir())
	e.Config.Listeners = []string{"PLAINTEXT://127.0.0.1:0"}
	e.Config.ZooKeeperConnect = zkAddr + e.Chroot
	e.Config.ZooKeeperSessionTimeout = 6 * time.Second
	for _, m := range o.mods {
		m(&e.Config)
	}
	e.unreachable = o.unreachable != nil && o.unreachable(&e.Config)
	e.Start()
	t.Cleanup(e.Stop)
	return e
}

func randName(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Start starts the broker again after Stop, on the same data directory and
// config (its changes since taken), and waits until it accepts connections
// at Addr, which stays the same (the cluster's link to it).
func (e *Env) Start() {
	e.T.Helper()
	log := slog.New(&logHandler{logs: e.Logs, panics: &e.panics, next: baseHandler()})
	registered := e.Logs.Count("INFO broker registered")
	if err := e.cl.StartBroker(e.Config, log); err != nil {
		e.T.Fatalf("kafkaenv: starting broker %d: %v", e.Config.BrokerID, err)
	}
	e.running = true
	e.Addrs = e.cl.ListenerAddrs(e.Config.BrokerID)
	e.Addr = e.Addrs[0]
	e.waitAccepting()
	e.waitRegistered(registered)
	if !e.unreachable {
		e.waitListed()
	}
}

// waitListed waits up to 10 s until the broker's Metadata lists the
// broker itself: Metadata answers from the controller's UpdateMetadata
// requests, which follow the registration.
func (e *Env) waitListed() {
	e.T.Helper()
	if e.Config.SSL.ClientAuth == "required" || len(e.Config.Listeners) > 0 && !strings.HasPrefix(strings.ToUpper(e.Config.Listeners[0]), "PLAINTEXT") {
		return // the first listener wants TLS; the test's own clients wait
	}
	c, err := kgo.NewClient(kgo.SeedBrokers(e.Addr))
	if err != nil {
		e.T.Fatal(err)
	}
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, c)
		cancel()
		if err != nil {
			continue
		}
		for _, b := range resp.Brokers {
			if b.NodeID == e.Config.BrokerID {
				return
			}
		}
	}
	e.T.Fatalf("kafkaenv: broker %s's Metadata did not list it within 10 s", e.Addr)
}

// waitRegistered waits up to 10 s until the broker has registered in
// /brokers/ids once more than the before registrations logged: what a
// test reads from ZooKeeper (or a Metadata listing every broker) holds
// only from then on.
func (e *Env) waitRegistered(before int) {
	e.T.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if e.Logs.Count("INFO broker registered") > before {
			return
		}
	}
	e.T.Fatalf("kafkaenv: broker %s did not register in ZooKeeper within 10 s", e.Addr)
}

// waitAccepting waits up to 10 s until the broker accepts a connection.
func (e *Env) waitAccepting() {
	e.T.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", e.Addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.T.Fatalf("broker at %s never accepted", e.Addr)
}

// Stop shuts the broker down (if it runs) and fails the test if it did not
// shut down cleanly or if it or the quorum server recovered from a panic.
func (e *Env) Stop() {
	if !e.running {
		return
	}
	e.running = false
	if err := e.cl.Stop(zkafkatest.Broker(e.Config.BrokerID)); err != nil {
		e.T.Errorf("stopping broker %d: %v", e.Config.BrokerID, err)
	}
	if n := e.panics.Swap(0) + quorumPanics.Swap(0); n > 0 {
		e.T.Errorf("the broker recovered from %d panics (run with ZKAFKA_TEST_LOG=1)", n)
	}
}

// Broker is the running broker (nil while stopped).
func (e *Env) Broker() *broker.Broker { return e.cl.RunningBroker(e.Config.BrokerID) }

// Cluster is the zkafkatest cluster the broker runs in, for its faults
// (Kill, Pause, Cut, interception).
func (e *Env) Cluster() *zkafkatest.Cluster { return e.cl }

// Move stops the broker and starts it again on the same data and chroot
// at new addresses, as a broker moved to another host: in a new zkafkatest
// cluster, whose links are new. Only for a broker of its own (Start, not
// StartCluster: the others would lose their links to it).
func (e *Env) Move() {
	e.T.Helper()
	e.Stop()
	e.cl = zkafkatest.StartCluster(e.T, zkafkatest.ExternalZooKeeper(zkAddr), zkafkatest.Chroot(e.Chroot),
		zkafkatest.Brokers(0), zkafkatest.Logger(slog.New(baseHandler())))
	e.T.Cleanup(e.Stop) // before the new cluster closes
	e.Start()
}

// Restart stops the broker and starts it again on the same data, at the
// same addresses.
func (e *Env) Restart() {
	e.Stop()
	e.Start()
}
