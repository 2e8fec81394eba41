package zkafkatest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/zkafkatest"
)

// client is a franz-go client of cl, closed at the end of the test.
func client(t testing.TB, cl *zkafkatest.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(cl.Seeds()...), kgo.MetadataMinAge(50 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond })}, opts...)
	c, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// zkSession opens a go-zookeeper session on cl and waits until it has
// one; the events after that come on the channel.
func zkSession(t testing.TB, cl *zkafkatest.Cluster, timeout time.Duration) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	conn, events, err := zk.Connect(cl.ZooKeeperServers(), timeout, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	waitState(t, events, zk.StateHasSession)
	return conn, events
}

// waitState waits up to 30 s for an event of state want.
func waitState(t testing.TB, events <-chan zk.Event, want zk.State) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			t.Logf("event %v", ev)
			if ev.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v event within 30 s", want)
		}
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func ctx(t testing.TB, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// produce produces values to topic and fails the test on an error.
func produce(t testing.TB, c *kgo.Client, topic string, values ...string) {
	t.Helper()
	for _, v := range values {
		if err := c.ProduceSync(ctx(t, 30*time.Second), &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %q: %v", v, err)
		}
	}
}

// consume reads n records of topic from the start.
func consume(t testing.TB, cl *zkafkatest.Cluster, topic string, n int) []string {
	t.Helper()
	c := client(t, cl, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []string
	cx := ctx(t, 30*time.Second)
	for len(out) < n {
		fs := c.PollFetches(cx)
		if cx.Err() != nil {
			t.Fatalf("consumed %d of %d records of %s: %v", len(out), n, topic, out)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	}
	return out
}

var worldACL = zk.WorldACL(zk.PermAll)

func kgoAllowAutoTopic() kgo.Opt { return kgo.AllowAutoTopicCreation() }

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// create creates path, retrying (for up to 30 s) what a client sees while
// it moves to another server or the ensemble elects a leader: a
// connection loss. A retry that finds the node made it.
func create(t testing.TB, conn *zk.Conn, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for try := 0; ; try++ {
		_, err := conn.Create(path, nil, 0, worldACL)
		if err == nil || try > 0 && errors.Is(err, zk.ErrNodeExists) {
			return
		}
		if !errors.Is(err, zk.ErrConnectionClosed) && !errors.Is(err, zk.ErrNoServer) || time.Now().After(deadline) {
			t.Fatalf("create %s: %v", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
