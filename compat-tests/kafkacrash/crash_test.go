package kafkacrash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/zkafka/zkafka/internal/freeport"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/quorum"
)

const childEnv = "ZKAFKA_CRASH_BROKER_PROPS"

func TestMain(m *testing.M) {
	if props := os.Getenv(childEnv); props != "" {
		os.Exit(brokerChild(props))
	}
	os.Exit(m.Run())
}

// brokerChild is the re-executed test binary: a broker from a
// server.properties, until SIGTERM (or SIGKILL, which is the point).
func brokerChild(props string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := broker.LoadConfig(props, log)
	if err != nil {
		log.Error("config", "err", err)
		return 2
	}
	b, err := broker.New(cfg, log)
	if err != nil {
		log.Error("broker.New", "err", err)
		return 1
	}
	errc := make(chan error, 1)
	go func() { errc <- b.ListenAndServe() }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sig:
	case err := <-errc:
		log.Error("serve", "err", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		return 1
	}
	return 0
}

func startQuorum(t *testing.T) string {
	cfg := quorum.DefaultConfig(t.TempDir())
	cfg.ClientPortAddress = "127.0.0.1"
	cfg.ClientPort = 0
	cfg.TickTime = 250 * time.Millisecond
	// DefaultConfig derived the bounds from the default tickTime (4 s..40 s).
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 500*time.Millisecond, 5*time.Second
	cfg.MaxClientCnxns = 0
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("ZKAFKA_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	srv, err := quorum.StartWithListener(cfg, log, l)
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

func freePort(t *testing.T) int {
	p, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// child is the broker process.
type child struct {
	t     *testing.T
	props string
	addr  string
	dir   string
	n     int // starts so far
	cmd   *exec.Cmd
	exit  chan error
	log   string
}

func (c *child) start() {
	c.t.Helper()
	c.n++
	c.log = filepath.Join(c.dir, fmt.Sprintf("broker-%d.log", c.n))
	out, err := os.Create(c.log)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+c.props)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	out.Close()
	c.cmd, c.exit = cmd, make(chan error, 1)
	go func() { c.exit <- cmd.Wait() }()
	// Ready once registered: the old process's ephemeral /brokers/ids/0
	// must first expire with its session.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(c.log); bytes.Contains(b, []byte("broker registered")) {
			return
		}
		select {
		case err := <-c.exit:
			c.exit <- err
			c.t.Fatalf("broker exited at start (%v):\n%s", err, c.tail())
		case <-time.After(20 * time.Millisecond):
		}
	}
	c.t.Fatalf("broker not registered after 30s:\n%s", c.tail())
}

func (c *child) kill() {
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exit
	c.exit <- nil
}

func (c *child) stop() {
	if c.cmd == nil {
		return
	}
	select {
	case err := <-c.exit:
		c.exit <- err
		return
	default:
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exit:
	case <-time.After(15 * time.Second):
		c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.exit
	}
	c.exit <- nil
}

func (c *child) tail() string {
	b, _ := os.ReadFile(c.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

type ack struct {
	partition int32
	offset    int64
}

// ledger records what the producer was told.
type ledger struct {
	mu       sync.Mutex
	acked    map[int64]ack // record id -> where its acknowledgement put it
	failed   map[int64]error
	maxAcked map[int32]int64 // partition -> highest acknowledged offset
	pids     map[int64]bool
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

func (l *ledger) snapshotMax() map[int32]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := map[int32]int64{}
	for p, o := range l.maxAcked {
		m[p] = o
	}
	return m
}

func TestKillNineUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a broker process several times")
	}
	rounds := 5
	if s := os.Getenv("ZKAFKA_CRASH_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	zkAddr := startQuorum(t)
	for _, policy := range []struct {
		name  string
		props string
	}{
		{"flush.messages=1", "log.flush.interval.messages=1\n"},
		{"no-fsync-default", ""},
	} {
		t.Run(policy.name, func(t *testing.T) { crashRounds(t, zkAddr, policy.props, rounds) })
	}
}

const partitions = 3

func crashRounds(t *testing.T, zkAddr, flushProps string, rounds int) {
	dir := t.TempDir()
	port := freePort(t)
	props := filepath.Join(dir, "server.properties")
	chroot := fmt.Sprintf("/crash-%d", time.Now().UnixNano())
	err := os.WriteFile(props, []byte(fmt.Sprintf(`broker.id=0
listeners=PLAINTEXT://127.0.0.1:%d
log.dirs=%s
zookeeper.connect=%s%s
zookeeper.session.timeout.ms=1500
num.partitions=%d
log.segment.bytes=262144
%s`, port, filepath.Join(dir, "logs"), zkAddr, chroot, partitions, flushProps)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	c := &child{t: t, props: props, addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir}
	t.Cleanup(c.stop)
	c.start()

	const topic = "crash"
	adm := kadm.NewClient(mustClient(t, kgo.SeedBrokers(c.addr)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	cancel()

	prod := mustClient(t, kgo.SeedBrokers(c.addr), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(2*time.Millisecond),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.UnknownTopicRetries(-1), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.ProducerBatchMaxBytes(64<<10), kgo.MaxBufferedRecords(5000))

	led := &ledger{acked: map[int64]ack{}, failed: map[int64]error{}, maxAcked: map[int32]int64{}, pids: map[int64]bool{}}
	stopLoad := make(chan struct{})
	loadDone := make(chan int64)
	go func() {
		var id int64
		payload := bytes.Repeat([]byte("z"), 200)
		for {
			select {
			case <-stopLoad:
				loadDone <- id
				return
			default:
			}
			rid := id
			id++
			r := &kgo.Record{Key: []byte(strconv.FormatInt(rid, 10)), Value: payload}
			prod.Produce(context.Background(), r, func(r *kgo.Record, err error) {
				led.mu.Lock()
				defer led.mu.Unlock()
				if err != nil {
					led.failed[rid] = err
					return
				}
				if prev, ok := led.acked[rid]; ok {
					led.failed[rid] = fmt.Errorf("acknowledged twice: %v and %v", prev, ack{r.Partition, r.Offset})
				}
				led.acked[rid] = ack{r.Partition, r.Offset}
				led.maxAcked[r.Partition] = max(led.maxAcked[r.Partition], r.Offset)
				led.pids[r.ProducerID] = true
			})
		}
	}()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	type roundFig struct{ ackedAtKill, hwAfter int64 }
	var figs []roundFig
	for round := 0; round < rounds; round++ {
		// The producer must make progress on this broker process first.
		base := led.count()
		waitFor(t, 30*time.Second, fmt.Sprintf("round %d: acknowledgements after the restart", round), func() bool {
			return led.count() >= base+500
		})
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		c.kill()
		atKill := led.snapshotMax()
		ackedAtKill := int64(led.count())
		c.start()
		// The log recovered: every acknowledged offset is below the hw.
		var hwSum int64
		hws := listEnds(t, c.addr, topic)
		for p := int32(0); p < partitions; p++ {
			if m, ok := atKill[p]; ok && hws[p] <= m {
				t.Fatalf("round %d: partition %d high watermark %d after restart, but offset %d was acknowledged before the kill", round, p, hws[p], m)
			}
			hwSum += hws[p]
		}
		figs = append(figs, roundFig{ackedAtKill, hwSum})
	}
	base := led.count()
	waitFor(t, 30*time.Second, "acknowledgements after the last restart", func() bool { return led.count() >= base+500 })
	close(stopLoad)
	produced := <-loadDone
	fctx, fcancel := context.WithTimeout(context.Background(), 60*time.Second)
	if err := prod.Flush(fctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	fcancel()

	led.mu.Lock()
	defer led.mu.Unlock()
	if len(led.failed) > 0 {
		n := 0
		for id, err := range led.failed {
			if n++; n > 5 {
				break
			}
			t.Errorf("record %d: %v", id, err)
		}
		t.Fatalf("%d of %d records failed", len(led.failed), produced)
	}
	if int64(len(led.acked)) != produced {
		t.Fatalf("%d records produced, %d acknowledged", produced, len(led.acked))
	}

	// Read everything back with a fresh client.
	hws := listEnds(t, c.addr, topic)
	var total int64
	offsets := map[string]map[int32]kgo.Offset{topic: {}}
	for p := int32(0); p < partitions; p++ {
		total += hws[p]
		offsets[topic][p] = kgo.NewOffset().AtStart()
	}
	cons := mustClient(t, kgo.SeedBrokers(c.addr), kgo.ConsumePartitions(offsets))
	seen := map[int64]ack{}
	next := map[int32]int64{}
	logPIDs := map[int64]int{}
	cctx, ccancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer ccancel()
	for n := int64(0); n < total; {
		fs := cons.PollFetches(cctx)
		if err := cctx.Err(); err != nil {
			t.Fatalf("read %d of %d records", n, total)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch partition %d: %v", p, err) })
		for _, r := range fs.Records() {
			n++
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d after %d (gap or duplicate)", r.Partition, r.Offset, next[r.Partition]-1)
			}
			next[r.Partition]++
			id, err := strconv.ParseInt(string(r.Key), 10, 64)
			if err != nil {
				t.Fatalf("bad key %q", r.Key)
			}
			if prev, dup := seen[id]; dup {
				t.Fatalf("record %d twice in the log: %v and %d/%d", id, prev, r.Partition, r.Offset)
			}
			seen[id] = ack{r.Partition, r.Offset}
			logPIDs[r.ProducerID]++
			if a, ok := led.acked[id]; !ok {
				t.Fatalf("record %d at %d/%d was never acknowledged", id, r.Partition, r.Offset)
			} else if a != seen[id] {
				t.Fatalf("record %d acknowledged at %v but stored at %v", id, a, seen[id])
			}
		}
	}
	for id, a := range led.acked {
		if _, ok := seen[id]; !ok {
			t.Fatalf("acknowledged record %d (%v) is missing", id, a)
		}
	}
	if len(logPIDs) != 1 {
		t.Errorf("records carry %d producer ids (%v): the idempotent producer had to reset", len(logPIDs), logPIDs)
	}
	t.Logf("%d kill -9 rounds; %d records acknowledged, all in the log exactly once at their acknowledged offsets (0..hw-1 in %d partitions, no gap); one producer id throughout",
		rounds, len(led.acked), partitions)
	for i, f := range figs {
		t.Logf("  round %d: killed with %d records acknowledged; recovered log holds %d (%d written but not yet acknowledged, kept and later acknowledged once through the retry's dedup)",
			i, f.ackedAtKill, f.hwAfter, f.hwAfter-f.ackedAtKill)
	}
}

func mustClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// listEnds is every partition's high watermark, retried while the broker
// comes up.
func listEnds(t *testing.T, addr, topic string) map[int32]int64 {
	t.Helper()
	cl := mustClient(t, kgo.SeedBrokers(addr))
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ends, err := adm.ListEndOffsets(ctx, topic)
		cancel()
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			last = err
			continue
		}
		m := map[int32]int64{}
		ends.Each(func(o kadm.ListedOffset) { m[o.Partition] = o.Offset })
		if len(m) == partitions {
			return m
		}
		last = errors.New("not every partition listed")
	}
	t.Fatalf("ListEndOffsets: %v", last)
	return nil
}

// waitFor polls cond (a bounded check: the producer's progress is only
// observable by polling its acknowledgements).
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
