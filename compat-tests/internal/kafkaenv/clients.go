package kafkaenv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Client returns a kgo client of the broker, with a short metadata age
// and retry backoff, closed at the end of the test (unless the test closed
// it first). opts come after those defaults.
func (e *Env) Client(opts ...kgo.Opt) *kgo.Client {
	e.T.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(e.Addr), kgo.MetadataMinAge(50 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond })}, opts...)
	c, err := kgo.NewClient(opts...)
	if err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(c.Close)
	return c
}

// Admin returns a kadm client on a new Client.
func (e *Env) Admin() *kadm.Client { return kadm.NewClient(e.Client()) }

// ZK opens a go-zookeeper session on the broker's ZooKeeper, closed at the
// end of the test. It has no chroot: name the broker's znodes with Path.
func (e *Env) ZK() *zk.Conn {
	e.T.Helper()
	c, _, err := zk.Connect(strings.Split(zkAddr, ","), 6*time.Second, zk.WithLogInfo(false),
		zk.WithLogger(discardZKLog{}))
	if err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(c.Close)
	return c
}

// Path returns the ZooKeeper path of the broker's znode p ("/brokers/ids/0").
func (e *Env) Path(p string) string { return e.Chroot + p }

type discardZKLog struct{}

func (discardZKLog) Printf(string, ...any) {}

// Context returns a context that times out after d or at the end of the
// test.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
