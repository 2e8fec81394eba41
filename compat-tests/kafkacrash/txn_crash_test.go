package kafkacrash

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/ktxn"
)

// txnView is what a restart must keep of a partition's transactions.
type txnView struct {
	lso, end  int64
	aborted   []kmsg.FetchResponseTopicPartitionAbortedTransaction
	producers []string // pid epoch last_sequence coordinator_epoch txn_start
	txnindex  map[string][]byte
}

func viewTxns(t *testing.T, addr, dir, topic string) txnView {
	t.Helper()
	cl, err := ktxn.Direct(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var v txnView
	waitFor(t, 30*time.Second, "the partition to be led", func() bool {
		v.lso, err = ktxn.Latest(cl, topic, 0, 1)
		return err == nil
	})
	if v.end, err = ktxn.Latest(cl, topic, 0, 0); err != nil {
		t.Fatal(err)
	}
	// Reads stop at segment ends: read on up to the LSO.
	seen := map[[2]int64]bool{}
	for off := int64(0); off < v.lso; {
		f, err := ktxn.FetchCommitted(cl, topic, 0, off)
		if err != nil || f.ErrorCode != 0 || len(f.RecordBatches) == 0 {
			t.Fatalf("fetch at %d: %v %d, %d bytes", off, err, f.ErrorCode, len(f.RecordBatches))
		}
		for _, a := range f.AbortedTransactions {
			if k := [2]int64{a.ProducerID, a.FirstOffset}; !seen[k] {
				seen[k] = true
				a.UnknownTags = kmsg.Tags{}
				v.aborted = append(v.aborted, a)
			}
		}
		for b := f.RecordBatches; len(b) >= 61; {
			n := int(binary.BigEndian.Uint32(b[8:])) + 12
			off = int64(binary.BigEndian.Uint64(b)) + int64(binary.BigEndian.Uint32(b[23:])) + 1
			if n > len(b) {
				break
			}
			b = b[n:]
		}
	}
	ps, err := ktxn.Producers(cl, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		v.producers = append(v.producers, fmt.Sprint(p.ProducerID, p.ProducerEpoch, p.LastSequence, p.CoordinatorEpoch, p.CurrentTxnStartOffset))
	}
	slices.Sort(v.producers)
	v.txnindex = map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".txnindex") {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			v.txnindex[e.Name()] = b
		}
	}
	return v
}

// TestKillNineKeepsTransactions: a broker process with transactions of
// twelve producers over several segments (some committed, some aborted,
// two open) is killed with SIGKILL, and the active segment's .txnindex is
// deleted as an unsynced file may be; the restarted broker rebuilds, from
// its last producer snapshot and the batches and markers after it, the
// same .txnindex files byte for byte, the same open transactions (LSO,
// DescribeProducers' current transaction starts) and aborted
// transactions, and the open transactions still complete.
func TestKillNineKeepsTransactions(t *testing.T) {
	zkAddr := startQuorum(t)
	dir := t.TempDir()
	port := freePort(t)
	props := filepath.Join(dir, "server.properties")
	err := os.WriteFile(props, []byte(fmt.Sprintf(`broker.id=0
listeners=PLAINTEXT://127.0.0.1:%d
log.dirs=%s
zookeeper.connect=%s/txn-crash-%d
zookeeper.session.timeout.ms=1500
transaction.partition.verification.enable=false
`, port, filepath.Join(dir, "logs"), zkAddr, time.Now().UnixNano())), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	c := &child{t: t, props: props, addr: fmt.Sprintf("127.0.0.1:%d", port), dir: dir}
	t.Cleanup(c.stop)
	c.start()
	const topic = "txn-crash"
	adm := kadm.NewClient(mustClient(t, kgo.SeedBrokers(c.addr)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"segment.bytes": kadm.StringPtr("2048")}, topic)
	cancel()
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ktxn.Direct(c.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	type producer struct {
		pid   int64
		epoch int16
		seq   int32
	}
	ps := make([]*producer, 12)
	for i := range ps {
		pid, epoch, err := ktxn.InitPID(cl)
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = &producer{pid: pid, epoch: epoch}
	}
	value := strings.Repeat("v", 100)
	end := func(p *producer, commit bool) {
		t.Helper()
		if code, err := ktxn.Marker(cl, topic, 0, p.pid, p.epoch, 0, commit); err != nil || code != 0 {
			t.Fatalf("marker of %d: %v %d", p.pid, err, code)
		}
	}
	// Round r opens producer r%12's transaction and ends round r-2's.
	const rounds = 40
	for r := range rounds {
		p := ps[r%len(ps)]
		pr, err := ktxn.Produce(cl, "crash-"+strconv.Itoa(r%len(ps)), topic, 0, ktxn.Batch(p.pid, p.epoch, p.seq, value, value, value))
		if err != nil || pr.ErrorCode != 0 {
			t.Fatalf("round %d: %v %+v", r, err, pr)
		}
		p.seq += 3
		if r >= 2 {
			end(ps[(r-2)%len(ps)], (r-2)%3 != 0)
		}
	}
	logDir := filepath.Join(dir, "logs", topic+"-0")
	before := viewTxns(t, c.addr, logDir, topic)
	if len(before.txnindex) < 2 || len(before.aborted) < 5 || before.lso >= before.end {
		t.Fatalf("the scenario should span segments with aborts and open transactions: %d .txnindex files, %d aborted, LSO %d, end %d",
			len(before.txnindex), len(before.aborted), before.lso, before.end)
	}

	c.kill()
	var active int64 = -1
	ents, _ := os.ReadDir(logDir)
	for _, e := range ents {
		if base, ok := strings.CutSuffix(e.Name(), ".log"); ok {
			if b, err := strconv.ParseInt(base, 10, 64); err == nil && b > active {
				active = b
			}
		}
	}
	lost := filepath.Join(logDir, fmt.Sprintf("%020d.txnindex", active))
	if _, err := os.Stat(lost); err != nil {
		t.Fatalf("the active segment %d should hold a marker of an abort: %v", active, err)
	}
	os.Remove(lost)
	c.start()
	after := viewTxns(t, c.addr, logDir, topic)
	if after.lso != before.lso || after.end != before.end {
		t.Fatalf("LSO/end %d/%d after the crash, %d/%d before", after.lso, after.end, before.lso, before.end)
	}
	if !slices.Equal(after.producers, before.producers) {
		t.Fatalf("producers after the crash:\n%q\nbefore:\n%q", after.producers, before.producers)
	}
	if !slices.EqualFunc(after.aborted, before.aborted, func(a, b kmsg.FetchResponseTopicPartitionAbortedTransaction) bool {
		return a.ProducerID == b.ProducerID && a.FirstOffset == b.FirstOffset
	}) {
		t.Fatalf("aborted after the crash %v, before %v", after.aborted, before.aborted)
	}
	if len(after.txnindex) != len(before.txnindex) {
		t.Fatalf(".txnindex files after the crash %d, before %d", len(after.txnindex), len(before.txnindex))
	}
	for name, b := range before.txnindex {
		if !slices.Equal(after.txnindex[name], b) {
			t.Fatalf("%s differs after the crash: %x, before %x", name, after.txnindex[name], b)
		}
	}
	cl.Close()
	if cl, err = ktxn.Direct(c.addr); err != nil {
		t.Fatal(err)
	}
	end(ps[(rounds-2)%len(ps)], true)
	end(ps[(rounds-1)%len(ps)], false)
	if lso, err := ktxn.Latest(cl, topic, 0, 1); err != nil || lso != before.end+2 {
		t.Fatalf("LSO after ending the open transactions: %d %v, want %d", lso, err, before.end+2)
	}
}
