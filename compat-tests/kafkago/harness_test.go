package kafkago

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
)

// zkAddr is the ZooKeeper every test uses, each under its own chroot.
var zkAddr string

func TestMain(m *testing.M) {
	addr, stop, err := startZooKeeper()
	if err != nil {
		os.Stderr.WriteString("starting ZooKeeper: " + err.Error() + "\n")
		os.Exit(1)
	}
	zkAddr = addr
	code := m.Run()
	stop()
	os.Exit(code)
}

func testLogger() *slog.Logger {
	if os.Getenv("ZKAFKA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// env is one broker on its own chroot and data directory.
type env struct {
	t      testing.TB
	cfg    broker.Config
	chroot string
	b      *broker.Broker
	addr   string
	served chan error
	logs   logCapture // the broker's warnings and errors
}

func randName(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// startBroker starts a broker; mod adjusts its config.
func startBroker(t testing.TB, mod ...func(*broker.Config)) *env {
	t.Helper()
	e := &env{t: t, chroot: "/" + randName("kafka-")}
	e.cfg = broker.DefaultConfig(t.TempDir())
	e.cfg.Listeners = []string{"PLAINTEXT://127.0.0.1:0"}
	e.cfg.ZooKeeperConnect = zkAddr + e.chroot
	e.cfg.ZooKeeperSessionTimeout = 6 * time.Second
	for _, m := range mod {
		m(&e.cfg)
	}
	e.start()
	t.Cleanup(e.stop)
	return e
}

func (e *env) start() {
	e.t.Helper()
	b, err := broker.New(e.cfg, slog.New(e.logs.wrap(testLogger().Handler())))
	if err != nil {
		e.t.Fatalf("broker.New: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	e.b, e.addr, e.served = b, l.Addr().String(), make(chan error, 1)
	go func() { e.served <- b.Serve(l) }()
	e.waitRegistered()
}

// waitRegistered waits until the broker answers ApiVersions.
func (e *env) waitRegistered() {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", e.addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.t.Fatalf("broker at %s never accepted", e.addr)
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
	e.b = nil
}

// restart stops the broker and starts it again on the same data, keeping
// its port-0 address fresh.
func (e *env) restart() {
	e.stop()
	e.start()
}

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

// zk opens a go-zookeeper session on the broker's ZooKeeper (no chroot;
// use e.path).
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
