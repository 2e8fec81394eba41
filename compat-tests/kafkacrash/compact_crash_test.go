package kafkacrash

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKillNineWhileCleaning kills the broker process with SIGKILL while
// its log cleaner cleans a compacted topic that an idempotent producer
// keeps updating (300 keys, 8 KiB segments, the cleaner looking for work
// every 10 ms), five times at random moments after cleanings have
// happened. After each restart a full read has strictly increasing
// offsets and, for every key, a last record at or after the last
// acknowledged one, with its value: no cleaning step, interrupted, lost or
// mixed up an acknowledged update.
func TestKillNineWhileCleaning(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a broker process several times")
	}
	zkAddr := startQuorum(t)
	dir := t.TempDir()
	port := freePort(t)
	props := filepath.Join(dir, "server.properties")
	err := os.WriteFile(props, []byte(fmt.Sprintf(`broker.id=0
listeners=PLAINTEXT://127.0.0.1:%d
log.dirs=%s
zookeeper.connect=%s/compact-crash-%d
zookeeper.session.timeout.ms=1500
log.flush.interval.messages=1
log.cleaner.backoff.ms=10
log.cleaner.threads=2
log.cleaner.dedupe.buffer.size=4194304
`, port, filepath.Join(dir, "logs"), zkAddr, time.Now().UnixNano())), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	c := &child{t: t, props: props, addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir}
	t.Cleanup(c.stop)
	c.start()
	const topic = "compact-crash"
	adm := kadm.NewClient(mustClient(t, kgo.SeedBrokers(c.addr)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact"),
		"segment.bytes": kadm.StringPtr("8192"), "min.cleanable.dirty.ratio": kadm.StringPtr("0.01")}, topic)
	cancel()
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	prod := mustClient(t, kgo.SeedBrokers(c.addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(1500),
		kgo.ProducerLinger(time.Millisecond), kgo.MaxBufferedRecords(200),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.MetadataMinAge(100*time.Millisecond))

	type acked struct {
		offset int64
		value  string
	}
	var mu sync.Mutex
	latest := map[string]acked{}
	n := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := fmt.Sprintf("k%d", i%300)
			v := fmt.Sprintf("%d-%s", i, strings.Repeat("p", 40))
			prod.Produce(context.Background(), &kgo.Record{Key: []byte(k), Value: []byte(v)}, func(r *kgo.Record, err error) {
				if err != nil {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				n++
				if a, ok := latest[k]; !ok || r.Offset > a.offset {
					latest[k] = acked{r.Offset, v}
				}
			})
		}
	}()
	defer func() { close(stop); prod.Close(); <-done }()
	count := func() int { mu.Lock(); defer mu.Unlock(); return n }
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for round := range 5 {
		base := count()
		waitFor(t, 30*time.Second, fmt.Sprintf("round %d: cleanings and acknowledgements", round), func() bool {
			b, _ := os.ReadFile(c.log)
			return count() >= base+2000 && bytes.Count(b, []byte("log cleaner: cleaned")) >= 2
		})
		time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
		c.kill()
		mu.Lock()
		want := make(map[string]acked, len(latest))
		for k, a := range latest {
			want[k] = a
		}
		mu.Unlock()
		c.start()
		got := readCompacted(t, c.addr, topic)
		for k, a := range want {
			g, ok := got[k]
			if !ok || g.offset < a.offset || (g.offset == a.offset && g.value != a.value) {
				t.Fatalf("round %d: key %s read at offset %d %q (present %v), but %q was acknowledged at %d",
					round, k, g.offset, g.value, ok, a.value, a.offset)
			}
		}
	}
}

type readValue struct {
	offset int64
	value  string
}

// readCompacted reads the partition from the start to its end, checking
// that offsets strictly increase, and returns each key's last record.
func readCompacted(t *testing.T, addr, topic string) map[string]readValue {
	t.Helper()
	end := endOffset(t, addr, topic)
	cl := mustClient(t, kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	defer cl.Close()
	out := map[string]readValue{}
	last := int64(-1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for last < end-1 {
		pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("read up to %d of %d", last, end)
		}
		if len(fs.Records()) == 0 && pctx.Err() != nil {
			break // the end is an offset gap of the cleaned log
		}
		for _, r := range fs.Records() {
			if r.Offset <= last {
				t.Fatalf("offset %d after %d", r.Offset, last)
			}
			last = r.Offset
			out[string(r.Key)] = readValue{r.Offset, string(r.Value)}
		}
	}
	return out
}

// endOffset is the high watermark of partition 0, retried while the
// broker comes up.
func endOffset(t *testing.T, addr, topic string) int64 {
	t.Helper()
	adm := kadm.NewClient(mustClient(t, kgo.SeedBrokers(addr)))
	defer adm.Close()
	var last error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ends, err := adm.ListEndOffsets(ctx, topic)
		cancel()
		if err == nil {
			err = ends.Error()
		}
		if o, ok := ends.Lookup(topic, 0); err == nil && ok {
			return o.Offset
		}
		last = err
	}
	t.Fatalf("ListEndOffsets: %v", last)
	return 0
}
