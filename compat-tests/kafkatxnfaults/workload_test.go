package kafkatxnfaults

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/compat-tests/internal/kcluster"
)

const (
	dataTopic   = "txn"
	dataParts   = int32(4)
	offsetTopic = "src" // the topic each producer's group commits an offset of
	commitShare = 0.7   // share of transactions a producer asks to commit
)

func txnID(p int) string   { return "chk-tx-" + strconv.Itoa(p) }
func groupID(p int) string { return "chk-g-" + strconv.Itoa(p) }

// phaseLabel is the fault running now, read when a transaction begins.
type phaseLabel struct{ v atomic.Value }

func (l *phaseLabel) set(s string) { l.v.Store(s) }
func (l *phaseLabel) get() string  { return l.v.Load().(string) }

// producer runs transactions for one transactional id until stopped,
// recording each one's outcome. After any error it closes its client and
// opens a new one with the same transactional id: InitProducerId fences
// the old epoch and aborts what it left open.
type producer struct {
	n     int
	seeds []string
	phase *phaseLabel
	mu    sync.Mutex
	txns  []Txn
	errs  []string
}

func (p *producer) run(stop <-chan struct{}) {
	var cl *kgo.Client
	defer func() {
		if cl != nil {
			cl.Close()
		}
	}()
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		if cl == nil {
			var err error
			if cl, err = p.client(); err != nil {
				p.note(err)
				time.Sleep(200 * time.Millisecond)
				seq--
				continue
			}
		}
		t, err := p.one(cl, TxnID{p.n, seq})
		p.mu.Lock()
		p.txns = append(p.txns, t)
		p.mu.Unlock()
		if err != nil {
			p.note(err)
			cl.Close()
			cl = nil
		}
	}
}

func (p *producer) client() (*kgo.Client, error) {
	return kgo.NewClient(kgo.SeedBrokers(p.seeds...), kgo.TransactionalID(txnID(p.n)),
		kgo.TransactionTimeout(10*time.Second), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(20*time.Second), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
}

func (p *producer) note(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.errs) < 50 {
		p.errs = append(p.errs, err.Error())
	}
}

// one runs transaction id: 2–5 records on random partitions, the group
// offset seq+1, then commit or abort. The returned error means the
// client must be replaced.
func (p *producer) one(cl *kgo.Client, id TxnID) (Txn, error) {
	t := Txn{ID: id, Records: 2 + rand.IntN(4), Outcome: Aborted, Phase: p.phase.get()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Records = 0
		return t, err
	}
	var produceErr atomic.Value
	for i := range t.Records {
		r := &kgo.Record{Topic: dataTopic, Partition: rand.Int32N(dataParts),
			Value: []byte(RecordValue(id, i, t.Records))}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				produceErr.Store(err)
			}
		})
	}
	err := cl.Flush(ctx)
	if e, _ := produceErr.Load().(error); e != nil {
		err = e
	}
	if err == nil {
		err = commitOffset(ctx, cl, id)
	}
	commit := err == nil && rand.Float64() < commitShare
	if !commit {
		if e := cl.AbortBufferedRecords(ctx); e != nil && err == nil {
			err = e
		}
		if e := cl.EndTransaction(ctx, kgo.TryAbort); e != nil && err == nil {
			err = e
		}
		return t, err
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Outcome = Unknown
		return t, err
	}
	t.Outcome = Committed
	return t, nil
}

// commitOffset commits offset seq+1 of src/0 for the producer's group in
// the open transaction (AddOffsetsToTxn, then TxnOffsetCommit at the
// group's coordinator, as GroupTransactSession does).
func commitOffset(ctx context.Context, cl *kgo.Client, id TxnID) error {
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return err
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = txnID(id.Producer), pid, epoch, groupID(id.Producer)
	addResp, err := add.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(addResp.ErrorCode); err != nil {
		return errors.Join(errors.New("AddOffsetsToTxn"), err)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = txnID(id.Producer), groupID(id.Producer), pid, epoch
	req.Generation, req.MemberID = -1, ""
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = offsetTopic
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = 0, int64(id.Seq+1), -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return errors.Join(errors.New("TxnOffsetCommit"), err)
			}
		}
	}
	return nil
}

// reader reads dataTopic with read_committed from the start until
// stopped.
type reader struct {
	mu    sync.Mutex
	recs  []Rec
	bad   []string
	total atomic.Int64
}

func startReader(c *kcluster.Cluster) (*reader, func()) {
	cl := c.Client(kgo.ConsumeTopics(dataTopic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	r := &reader{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(r.add)
		}
	}()
	return r, func() { cancel(); <-done; cl.Close() }
}

func (r *reader) add(rec *kgo.Record) {
	id, i, _, ok := ParseRecord(string(rec.Value))
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.bad = append(r.bad, string(rec.Value))
		id = TxnID{-1, -1}
	}
	r.recs = append(r.recs, Rec{ID: id, Index: i, Partition: rec.Partition, Offset: rec.Offset})
	r.total.Add(1)
}

func (r *reader) snapshot() []Rec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Rec(nil), r.recs...)
}
