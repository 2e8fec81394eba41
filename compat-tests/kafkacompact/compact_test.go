package kafkacompact

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/compat-tests/internal/kafkaenv"
)

func TestMain(m *testing.M) { kafkaenv.Main(m) }

// fastCleaner makes the cleaner look for work every 20 ms.
func fastCleaner(c *broker.Config) {
	c.Cleaner.Backoff = 20 * time.Millisecond
	c.Cleaner.Threads = 2
	c.Cleaner.DedupeBufferSize = 4 << 20
}

func ctxT(t testing.TB) context.Context { return kafkaenv.Context(t, 60*time.Second) }

// compactedTopic creates a one-partition compacted topic with small
// segments that the cleaner cleans as soon as anything is dirty.
func compactedTopic(t *testing.T, e *kafkaenv.Env, name string, extra map[string]string) {
	t.Helper()
	cfg := map[string]*string{}
	for k, v := range map[string]string{"cleanup.policy": "compact", "segment.bytes": "16384",
		"min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "0"} {
		cfg[k] = kadm.StringPtr(v)
	}
	for k, v := range extra {
		cfg[k] = kadm.StringPtr(v)
	}
	resp, err := e.Admin().CreateTopic(ctxT(t), 1, 1, cfg, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// logBytes is the size of the partition's .log files.
func logBytes(t *testing.T, e *kafkaenv.Env, topic string) int64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(e.Config.LogDirs[0], topic+"-0", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err == nil {
			n += fi.Size()
		}
	}
	return n
}

// readAll consumes the partition from the start to its high watermark,
// checking that offsets strictly increase.
func readAll(t *testing.T, e *kafkaenv.Env, topic string) []*kgo.Record {
	t.Helper()
	adm := e.Admin()
	ends, err := adm.ListEndOffsets(ctxT(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	c := e.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(100*time.Millisecond), kgo.FetchMaxPartitionBytes(64<<10))
	defer c.Close()
	var out []*kgo.Record
	last := int64(-1)
	ctx := ctxT(t)
	for last < end.Offset-1 {
		// The tail of a compacted log may be an offset gap up to the
		// end: a poll that times out means everything was read.
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := c.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			t.Fatalf("read up to %d of %d: %v", last, end.Offset, ctx.Err())
		}
		if len(fs.Records()) == 0 && pctx.Err() != nil {
			break
		}
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch: %v", err)
			}
		})
		for _, r := range fs.Records() {
			if r.Offset <= last {
				t.Fatalf("offset %d after %d", r.Offset, last)
			}
			last = r.Offset
			out = append(out, r)
		}
	}
	return out
}

// model is the latest value of each key; nil for a tombstone.
type model map[string][]byte

// checkRead compares a full read with the model: the latest value of
// every live key last (earlier ones only where the log is not cleaned
// yet: the active segment is never cleaned), and no record at all of a key
// whose latest is a tombstone. It returns why not, or "".
func (m model) checkRead(recs []*kgo.Record) string {
	got := map[string][]byte{}
	for _, r := range recs {
		got[string(r.Key)] = r.Value
	}
	for k, v := range m {
		g, ok := got[k]
		switch {
		case v == nil && ok:
			return fmt.Sprintf("key %s: deleted, read %q", k, g)
		case v != nil && (!ok || string(g) != string(v)):
			return fmt.Sprintf("key %s: read %q, want %q", k, g, v)
		}
	}
	if len(got) > len(m) {
		return "read keys never produced"
	}
	return ""
}

// TestCompactionLatestValuePerKey produces ten updates of each of 3000
// keys, in every codec, then tombstones a fifth of them, to a compacted
// topic with 16 KiB segments, with the cleaner off; then restarts the
// broker with the cleaner on. Once it has cleaned, a full read gives
// exactly the latest value of each live key and no deleted key, with
// strictly increasing offsets, and the log shrank by what the duplicates
// took.
func TestCompactionLatestValuePerKey(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(fastCleaner, func(c *broker.Config) { c.Cleaner.Enable = false }))
	const topic = "compacted"
	compactedTopic(t, e, topic, nil)
	m := model{}
	rng := rand.New(rand.NewPCG(1, 2))
	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(),
		kgo.Lz4Compression(), kgo.ZstdCompression()}
	var recs []*kgo.Record
	const keys = 3000
	for round := range 10 {
		for k := range keys {
			v := fmt.Sprintf("value-%d-%d-%s", k, round, strings.Repeat("x", rng.IntN(40)))
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "key-%d", k), Value: []byte(v)})
			m[fmt.Sprintf("key-%d", k)] = []byte(v)
		}
	}
	for k := 0; k < keys; k += 5 {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "key-%d", k)})
		m[fmt.Sprintf("key-%d", k)] = nil
	}
	for i := 0; i < len(recs); i += 1000 {
		c := e.Client(kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(codecs[(i/1000)%len(codecs)]), kgo.ProducerBatchMaxBytes(4000))
		if err := c.ProduceSync(ctxT(t), recs[i:min(i+1000, len(recs))]...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	before := logBytes(t, e, topic)
	if why := m.checkRead(readAll(t, e, topic)); why == "" {
		t.Fatal("the uncleaned log already reads as the model: the test would prove nothing")
	}
	e.Stop()
	e.Config.Cleaner.Enable = true
	e.Start()
	// delete.retention.ms=0: the first cleaning that reaches a tombstone
	// sets its horizon; a later cleaning drops it. Nudge the log with
	// updates of a few keys until one has.
	nudge := e.Client(kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(2000))
	deadline := time.Now().Add(60 * time.Second)
	var why string
	for i := 0; ; i++ {
		why = m.checkRead(readAll(t, e, topic))
		if why == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s of cleaning: %s", why)
		}
		var batch []*kgo.Record
		for j := range 200 {
			k := fmt.Sprintf("key-%d", 1+(i*200+j)%keys)
			if m[k] == nil {
				continue
			}
			v := fmt.Sprintf("nudge-%d-%d-%s", i, j, strings.Repeat("y", 60))
			batch = append(batch, &kgo.Record{Key: []byte(k), Value: []byte(v)})
			m[k] = []byte(v)
		}
		if err := nudge.ProduceSync(ctxT(t), batch...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	after := logBytes(t, e, topic)
	live := 0
	for _, v := range m {
		if v != nil {
			live++
		}
	}
	// The duplicates were 9 of every 10 records plus the tombstones: what
	// is left is the live keys' last values, the uncleaned active
	// segment (16 KiB at most) and batch overheads.
	if after*3 > before {
		t.Fatalf("log %d bytes after cleaning, %d before: did not shrink by the duplicates", after, before)
	}
	t.Logf("log %d bytes before cleaning, %d after (%d live keys of %d)", before, after, live, keys)
	cp, err := os.ReadFile(filepath.Join(e.Config.LogDirs[0], "cleaner-offset-checkpoint"))
	if err != nil || !strings.Contains(string(cp), "\n"+topic+" 0 ") {
		t.Fatalf("cleaner-offset-checkpoint %q (%v) has no entry for %s-0", cp, err, topic)
	}
}

// TestCompactedTopicBadInput: a keyless record to a compacted topic is
// refused with INVALID_RECORD; an unknown cleanup.policy with
// INVALID_CONFIG.
func TestCompactedTopicBadInput(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(fastCleaner))
	compactedTopic(t, e, "keys-only", nil)
	c := e.Client(kgo.DefaultProduceTopic("keys-only"), kgo.RecordRetries(0))
	err := c.ProduceSync(ctxT(t), &kgo.Record{Value: []byte("no key")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("keyless record to a compacted topic: %v, want INVALID_RECORD", err)
	}
	if err := c.ProduceSync(ctxT(t), &kgo.Record{Key: []byte("k"), Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("keyed record: %v", err)
	}
	for _, policy := range []string{"shred", "compact,shred", ""} {
		resp, err := e.Admin().CreateTopic(ctxT(t), 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr(policy)}, "bad-"+strings.ReplaceAll(policy, ",", "-")+"x")
		if err == nil {
			err = resp.Err
		}
		if !errors.Is(err, kerr.InvalidConfig) {
			t.Fatalf("cleanup.policy=%q: %v, want INVALID_CONFIG", policy, err)
		}
	}
	for _, policy := range []string{"compact,delete", "delete, compact", "delete"} {
		resp, err := e.Admin().CreateTopic(ctxT(t), 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr(policy)}, "ok-"+strings.NewReplacer(",", "-", " ", "").Replace(policy))
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("cleanup.policy=%q: %v", policy, err)
		}
	}
}

// TestCorruptSegmentMarksUncleanable corrupts a closed segment of a
// compacted topic while the broker is down: after the restart the cleaner
// meets it, logs that the partition is uncleanable, deletes nothing, and
// the partition keeps serving produce and fetch.
func TestCorruptSegmentMarksUncleanable(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(fastCleaner, func(c *broker.Config) { c.Cleaner.Enable = false }))
	compactedTopic(t, e, "corrupt", nil)
	c := e.Client(kgo.DefaultProduceTopic("corrupt"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(2000))
	var recs []*kgo.Record
	for i := range 2000 {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "k%d", i%50), Value: []byte(strings.Repeat("v", 50))})
	}
	if err := c.ProduceSync(ctxT(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	e.Stop()
	files, _ := filepath.Glob(filepath.Join(e.Config.LogDirs[0], "corrupt-0", "*.log"))
	if len(files) < 3 {
		t.Fatalf("%d segments; want closed ones", len(files))
	}
	// Flip a byte in the records of the second segment's first batch: the
	// CRC no longer matches (recovery checks only the last segment).
	f, err := os.OpenFile(files[1], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	f.ReadAt(b[:], 70)
	b[0] ^= 0xff
	f.WriteAt(b[:], 70)
	f.Close()
	before := logBytes(t, e, "corrupt")
	e.Config.Cleaner.Enable = true
	e.Start()
	deadline := time.Now().Add(30 * time.Second)
	for e.Logs.Count("ERROR log cleaner: marking the partition uncleanable") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the cleaner never marked the corrupt partition uncleanable; logs: %q", e.Logs.All())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if after := logBytes(t, e, "corrupt"); after < before {
		t.Fatalf("the log shrank from %d to %d bytes: the cleaner deleted data of a corrupt log", before, after)
	}
	c = e.Client(kgo.DefaultProduceTopic("corrupt"))
	if err := c.ProduceSync(ctxT(t), &kgo.Record{Key: []byte("after"), Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce after marking uncleanable: %v", err)
	}
	cons := e.Client(kgo.ConsumeTopics("corrupt"), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd().Relative(-1)))
	fs := cons.PollFetches(ctxT(t))
	if len(fs.Records()) == 0 || string(fs.Records()[len(fs.Records())-1].Key) != "after" {
		t.Fatalf("fetch after marking uncleanable: %v %v", fs.Records(), fs.Errors())
	}
}

// TestIdempotentProducerThroughCleaningsAndRestarts keeps one idempotent
// producer writing updates of 300 keys to a compacted topic while the
// cleaner cleans and the broker restarts three times: no produce fails
// (no OUT_OF_ORDER_SEQUENCE_NUMBER), and a full read at the end gives the
// latest acknowledged value of every key.
func TestIdempotentProducerThroughCleaningsAndRestarts(t *testing.T) {
	e := kafkaenv.Start(t, kafkaenv.Configure(fastCleaner))
	compactedTopic(t, e, "idem", map[string]string{"segment.bytes": "4096"})
	var addrMu sync.Mutex
	addr := e.Addr
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		addrMu.Lock()
		a := addr
		addrMu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, a)
	}
	p := e.Client(kgo.DefaultProduceTopic("idem"), kgo.Dialer(dial), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(2000), kgo.RequestRetries(1000),
		kgo.ProducerLinger(time.Millisecond), kgo.MaxBufferedRecords(64))
	m := model{}
	var mu sync.Mutex
	var produceErr error
	produced := 0
	for restart := range 4 {
		for i := range 1500 {
			k := fmt.Sprintf("k%d", (restart*1500+i)%300)
			v := fmt.Sprintf("%d-%d-%s", restart, i, strings.Repeat("z", 30))
			p.Produce(ctxT(t), &kgo.Record{Key: []byte(k), Value: []byte(v)}, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil && produceErr == nil {
					produceErr = err
				}
				produced++
			})
			mu.Lock()
			m[k] = []byte(v) // records to one partition are acked in order
			mu.Unlock()
		}
		if err := p.Flush(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if produceErr != nil {
			t.Fatalf("produce through cleanings and restarts: %v", produceErr)
		}
		if restart < 3 {
			e.Restart()
			addrMu.Lock()
			addr = e.Addr
			addrMu.Unlock()
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		recs := readAll(t, e, "idem")
		why := m.checkRead(recs)
		if why == "" && len(recs) < produced/3 {
			break
		}
		if why == "" {
			why = fmt.Sprintf("%d records of the %d produced are left: the cleaner did not clean", len(recs), produced)
		}
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
		// Duplicates in the active segment stay until it rolls.
		p.ProduceSync(ctxT(t), &kgo.Record{Key: []byte("roll"), Value: []byte(strings.Repeat("r", 3000))})
		m["roll"] = []byte(strings.Repeat("r", 3000))
		time.Sleep(100 * time.Millisecond)
	}
}
