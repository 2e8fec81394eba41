package kafkagroups

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/quorum"
)

var zkAddr string

func TestMain(m *testing.M) {
	stop := func() {}
	if a := os.Getenv("ZKAFKA_TEST_ZK"); a != "" {
		zkAddr = a
	} else {
		addr, s, err := startQuorum()
		if err != nil {
			os.Stderr.WriteString("starting ZooKeeper: " + err.Error() + "\n")
			os.Exit(1)
		}
		zkAddr, stop = addr, s
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func startQuorum() (string, func(), error) {
	dir, err := os.MkdirTemp("", "kafkagroups-zk-")
	if err != nil {
		return "", nil, err
	}
	cfg := quorum.DefaultConfig(dir)
	cfg.ClientPort, cfg.ClientPortAddress = 0, "127.0.0.1"
	cfg.TickTime = 500 * time.Millisecond
	cfg.MaxClientCnxns = 0
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv, err := quorum.StartWithListener(cfg, testLogger(), l)
	if err != nil {
		l.Close()
		return "", nil, err
	}
	return l.Addr().String(), func() { srv.Close(); os.RemoveAll(dir) }, nil
}

func testLogger() *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(io.Discard, nil)
	if os.Getenv("ZKAFKA_TEST_LOG") != "" {
		h = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	return slog.New(panicCounter{h})
}

// panics counts the broker's "panic serving connection" log lines: a
// recovered panic closes only one connection and clients retry, so tests
// would pass over it without this.
var panics atomic.Int64

type panicCounter struct{ slog.Handler }

func (p panicCounter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || p.Handler.Enabled(ctx, l)
}

func (p panicCounter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && strings.Contains(r.Message, "panic") {
		panics.Add(1)
	}
	if p.Handler.Enabled(ctx, r.Level) {
		return p.Handler.Handle(ctx, r)
	}
	return nil
}

func (p panicCounter) WithAttrs(a []slog.Attr) slog.Handler {
	return panicCounter{p.Handler.WithAttrs(a)}
}
func (p panicCounter) WithGroup(n string) slog.Handler { return panicCounter{p.Handler.WithGroup(n)} }

func randName(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// env is one broker on its own chroot and data directory.
type env struct {
	t      testing.TB
	cfg    broker.Config
	chroot string
	b      *broker.Broker
	addr   string
	served chan error
}

// startBroker starts a broker with test-friendly group settings: no
// initial rebalance delay and a 500 ms minimum session timeout.
func startBroker(t testing.TB, mod ...func(*broker.Config)) *env {
	t.Helper()
	e := &env{t: t, chroot: "/" + randName("groups-")}
	e.cfg = broker.DefaultConfig(t.TempDir())
	e.cfg.Listeners = []string{"PLAINTEXT://127.0.0.1:0"}
	e.cfg.ZooKeeperConnect = zkAddr + e.chroot
	e.cfg.ZooKeeperSessionTimeout = 6 * time.Second
	e.cfg.Groups.InitialRebalanceDelay = 0
	e.cfg.Groups.MinSessionTimeout = 500 * time.Millisecond
	for _, m := range mod {
		m(&e.cfg)
	}
	e.start()
	t.Cleanup(e.stop)
	return e
}

func (e *env) start() {
	e.t.Helper()
	b, err := broker.New(e.cfg, testLogger())
	if err != nil {
		e.t.Fatalf("broker.New: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	e.b, e.addr, e.served = b, l.Addr().String(), make(chan error, 1)
	go func() { e.served <- b.Serve(l) }()
	waitFor(e.t, 10*time.Second, "broker accepts connections", func() bool {
		c, err := net.DialTimeout("tcp", e.addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

func (e *env) stop() {
	if e.b == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.b.Shutdown(ctx); err != nil {
		e.t.Errorf("Shutdown: %v", err)
	}
	if err := <-e.served; err != broker.ErrServerClosed {
		e.t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	if n := panics.Swap(0); n > 0 {
		e.t.Errorf("the broker recovered from %d panics (run with ZKAFKA_TEST_LOG=1)", n)
	}
	e.b = nil
}

func (e *env) restart() {
	e.stop()
	e.start()
}

// client returns a kgo client closed at the end of the test (unless the
// test closed it first).
func (e *env) client(opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(e.addr), kgo.MetadataMinAge(50 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond })}, opts...)
	c, err := kgo.NewClient(opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c
}

func (e *env) admin() *kadm.Client { return kadm.NewClient(e.client()) }

func (e *env) zk() *zk.Conn {
	e.t.Helper()
	c, _, err := zk.Connect(strings.Split(zkAddr, ","), 6*time.Second, zk.WithLogInfo(false),
		zk.WithLogger(discardZKLog{}))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	return c
}

func (e *env) path(p string) string { return e.chroot + p }

type discardZKLog struct{}

func (discardZKLog) Printf(string, ...any) {}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond every 20 ms for at most d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func createTopic(t testing.TB, e *env, name string, partitions int32) {
	t.Helper()
	resp, err := e.admin().CreateTopic(ctxT(t), partitions, 1, nil, name)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", name, err, resp.Err)
	}
}

// produce writes n records "prefix-i" round robin over partitions.
func produce(t testing.TB, e *env, topic, prefix string, n, partitions int) {
	t.Helper()
	c := e.client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer c.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := 0; i < n; i++ {
		wg.Add(1)
		r := &kgo.Record{Partition: int32(i % partitions), Value: []byte(prefix + "-" + itoa(i))}
		c.Produce(ctxT(t), r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}
