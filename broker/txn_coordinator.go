package broker

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zkafka/zkafka/broker/txn"
	"github.com/zkafka/zkafka/kproto"
)

// The transaction coordinator's shell around the pure state machine of
// broker/txn. A transactional id is coordinated by the leader of its
// partition of __transaction_state (txn_topic.go); this broker holds the
// transactions of each partition it leads, loaded from the partition's
// local log when it became leader (txn_load.go), and every state change
// is a record appended to that partition and acknowledged only once the
// high watermark passes it (txn_log.go), so the next leader loads it.
// Prepare states are completed by sending WriteTxnMarkers to the leaders
// of the transaction's partitions (txn_markers.go).
//
// Locking: txnCoordinator.mu guards the partitions and every Txn in them;
// it is never held across a log append, a wait or a request.

type txnCoordinator struct {
	b   *Broker
	cfg TxnConfig
	sm  txn.Config

	mu struct {
		sync.Mutex
		// parts are the __transaction_state partitions led here, by index.
		parts map[int32]*txnPartition
		// changed is closed (and forgotten) when a transaction's state
		// is applied or abandoned, a marker sender ends, or leadership
		// moves: doWaiting's requests wait on it. nil until one waits.
		changed chan struct{}
	}
	// clients are kgo clients of the brokers markers go to, by address.
	clients struct {
		sync.Mutex
		m map[string]*kgo.Client
	}
	// batches queue the markers bound for each broker (txn_markers.go).
	batches struct {
		sync.Mutex
		m map[int32]*markerQueue
	}
}

// txnPartition is one led partition's transactions.
type txnPartition struct {
	index int32
	// epoch is the partition's leader epoch the transactions were loaded
	// in (the coordinator epoch of the markers).
	epoch int32
	// loading is true until the log has been read; requests meanwhile
	// get COORDINATOR_LOAD_IN_PROGRESS.
	loading bool
	txns    map[string]*txn.Txn
	// marking are the ids whose markers are being sent.
	marking map[string]bool
}

func newTxnCoordinator(b *Broker) *txnCoordinator {
	c := &txnCoordinator{b: b, cfg: b.cfg.Txn}
	c.cfg.fillDefaults()
	c.sm = txn.Config{MaxTimeoutMs: int32(c.cfg.MaxTimeout.Milliseconds()), ExpirationMs: c.cfg.IDExpiration.Milliseconds()}
	c.mu.parts = map[int32]*txnPartition{}
	c.clients.m = map[string]*kgo.Client{}
	c.batches.m = map[int32]*markerQueue{}
	return c
}

// start runs the timer (timeouts and expiration) and loads the
// partitions already led here.
func (c *txnCoordinator) start() {
	if t := c.b.cluster.topic(transactionTopic); t != nil {
		c.leadershipChanged(t)
	}
	c.b.goTracked("txn-timer", c.timerLoop)
}

// stop closes the marker clients (after the broker's goroutines ended).
func (c *txnCoordinator) stop() {
	c.clients.Lock()
	defer c.clients.Unlock()
	for _, cl := range c.clients.m {
		cl.Close()
	}
	clear(c.clients.m)
}

// leadershipChanged loads the partitions of t that now lead here (or lead
// in a new epoch) and forgets the ones that do not. Called by applyTopic
// for __transaction_state, after the roles are given.
func (c *txnCoordinator) leadershipChanged(t *topic) {
	var load []*txnPartition
	c.mu.Lock()
	for i, old := range c.mu.parts {
		part := t.partition(i)
		if part == nil || part.leaderEpoch.Load() != old.epoch {
			c.b.log.Info("transaction coordinator moved away", "partition", i)
			delete(c.mu.parts, i)
		}
	}
	for p := range t.replicas {
		part := t.partition(int32(p))
		if part == nil {
			continue
		}
		if old := c.mu.parts[int32(p)]; old != nil && old.epoch == part.leaderEpoch.Load() {
			continue
		}
		tp := &txnPartition{index: int32(p), epoch: part.leaderEpoch.Load(), loading: true,
			txns: map[string]*txn.Txn{}, marking: map[string]bool{}}
		c.mu.parts[int32(p)] = tp
		load = append(load, tp)
	}
	c.notifyLocked()
	c.mu.Unlock()
	for _, tp := range load {
		c.b.goTracked("txn-load", func() { c.load(tp) })
	}
}

// partitionOf is id's __transaction_state partition as this broker knows
// the topic; ok false when the topic does not exist here.
func (c *txnCoordinator) partitionOf(id string) (*topic, int32, bool) {
	t := c.b.cluster.topic(transactionTopic)
	if t == nil || len(t.replicas) == 0 {
		return nil, 0, false
	}
	return t, transactionPartitionOf(id, len(t.replicas)), true
}

// lookupLocked returns the partition that holds id, if this broker
// coordinates it: NOT_COORDINATOR when it does not lead the partition,
// COORDINATOR_LOAD_IN_PROGRESS while it loads. c.mu must be held.
func (c *txnCoordinator) lookupLocked(id string) (*txnPartition, kproto.ErrorCode) {
	t, p, ok := c.partitionOf(id)
	if !ok {
		return nil, kproto.CodeNotCoordinator
	}
	part := t.partition(p)
	if part == nil {
		return nil, kproto.CodeNotCoordinator
	}
	tp := c.mu.parts[p]
	if tp == nil || tp.epoch != part.leaderEpoch.Load() {
		// The hook has not run yet for this term: it will load.
		return nil, kproto.CodeCoordinatorLoadInProgress
	}
	if tp.loading {
		return nil, kproto.CodeCoordinatorLoadInProgress
	}
	return tp, kproto.CodeNone
}

// currentLocked reports whether tp is still the partition led here in its
// epoch. c.mu must be held.
func (c *txnCoordinator) currentLocked(tp *txnPartition) bool {
	return c.mu.parts[tp.index] == tp
}

// current is currentLocked taking c.mu.
func (c *txnCoordinator) current(tp *txnPartition) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.currentLocked(tp)
}

// do runs op on id's Txn under the lock, then carries out its Step: the
// write (appended, waited for, applied or abandoned) and the markers.
// It returns the Step's code, or the write's failure, with the Txn as
// applied. op gets nil when the id is unknown; it may return a new Txn to
// add (created only if its write succeeds).
func (c *txnCoordinator) do(id string, op func(t *txn.Txn, nowMs int64) (*txn.Txn, txn.Step)) (kproto.ErrorCode, txn.Metadata) {
	c.mu.Lock()
	tp, code := c.lookupLocked(id)
	if code != kproto.CodeNone {
		c.mu.Unlock()
		return code, txn.Metadata{}
	}
	now := c.b.now()
	t, step := op(tp.txns[id], now.UnixMilli())
	if t != nil && tp.txns[id] == nil {
		tp.txns[id] = t // known at once, as Kafka's getOrCreate: a concurrent init waits for its write
	}
	if step.Write == nil {
		var m txn.Metadata
		if t != nil {
			m = t.Cur
		}
		c.mu.Unlock()
		return step.Code, m
	}
	w := *step.Write
	c.mu.Unlock()
	if code := c.appendRecord(tp, id, w, now); code != kproto.CodeNone {
		c.mu.Lock()
		t.Abandon()
		c.notifyLocked()
		c.mu.Unlock()
		return code, txn.Metadata{}
	}
	c.mu.Lock()
	if !c.currentLocked(tp) {
		c.mu.Unlock()
		return kproto.CodeNotCoordinator, txn.Metadata{}
	}
	t.Apply()
	if t.Cur.State == txn.Dead {
		delete(tp.txns, id)
	}
	m := t.Cur
	c.notifyLocked()
	c.mu.Unlock()
	if step.Markers {
		c.startMarkers(tp, id)
	}
	return step.Code, m
}

// concurrentWait bounds doWaiting's wait for a transaction still being
// completed.
const concurrentWait = 500 * time.Millisecond

// doWaiting is do for a client's request. Where do's outcome is
// CONCURRENT_TRANSACTIONS (the id's last transaction is still being
// completed: its markers are being written), it waits for a change of
// state, up to concurrentWait, and runs op again: a producer that begins
// its next transaction right after EndTxn is answered once the markers
// are in, where Kafka answers CONCURRENT_TRANSACTIONS and the client backs
// off (franz-go and the Java client 20 ms) before it retries, which caps
// back-to-back transactions near 50 a second. The answer is the one that
// retry would get; after the bound it is CONCURRENT_TRANSACTIONS, as
// Kafka's.
func (c *txnCoordinator) doWaiting(id string, op func(t *txn.Txn, nowMs int64) (*txn.Txn, txn.Step)) (kproto.ErrorCode, txn.Metadata) {
	timer := time.NewTimer(concurrentWait)
	defer timer.Stop()
	for {
		c.mu.Lock()
		changed := c.changedLocked() // taken before do looks: no change is missed
		c.mu.Unlock()
		code, m := c.do(id, op)
		if code != kproto.CodeConcurrentTransactions {
			return code, m
		}
		select {
		case <-changed:
		case <-timer.C:
			return code, m
		case <-c.b.done:
			return code, m
		}
	}
}

// changedLocked is the channel the next change closes. c.mu must be held.
func (c *txnCoordinator) changedLocked() chan struct{} {
	if c.mu.changed == nil {
		c.mu.changed = make(chan struct{})
	}
	return c.mu.changed
}

// notifyLocked wakes doWaiting's waiters. c.mu must be held.
func (c *txnCoordinator) notifyLocked() {
	if c.mu.changed != nil {
		close(c.mu.changed)
		c.mu.changed = nil
	}
}

// timerLoop aborts timed-out transactions and expires idle ids.
func (c *txnCoordinator) timerLoop() {
	abort := time.NewTicker(c.cfg.AbortCheck)
	defer abort.Stop()
	lastRemove := time.Now()
	for {
		select {
		case <-c.b.done:
			return
		case <-abort.C:
		}
		expire := time.Since(lastRemove) >= c.cfg.RemoveCheck
		if expire {
			lastRemove = time.Now()
		}
		c.tick(expire)
	}
}

// tick runs the state machine's timer over every loaded transaction;
// with expire false, only Ongoing ones (the abort check runs more often
// than the expiration check, as Kafka's two schedules).
func (c *txnCoordinator) tick(expire bool) {
	var ids []string
	nowMs := c.b.now().UnixMilli()
	c.mu.Lock()
	for _, tp := range c.mu.parts {
		if tp.loading {
			continue
		}
		for id, t := range tp.txns {
			if t.Pending != nil || (t.Cur.State != txn.Ongoing && !expire) {
				continue
			}
			probe := *t
			if st := probe.Tick(c.sm, nowMs); st.Write != nil {
				ids = append(ids, id)
			}
		}
	}
	c.mu.Unlock()
	for _, id := range ids {
		code, m := c.do(id, func(t *txn.Txn, nowMs int64) (*txn.Txn, txn.Step) {
			if t == nil || (!expire && t.Cur.State != txn.Ongoing) {
				return t, txn.Step{}
			}
			return t, t.Tick(c.sm, nowMs)
		})
		if code != kproto.CodeNone {
			c.b.log.Debug("transaction timer", "transactional_id", id, "code", code)
		} else if m.State == txn.PrepareAbort {
			c.b.log.Info("aborting timed-out transaction", "transactional_id", id, "producer_id", m.ProducerID, "epoch", m.ProducerEpoch)
		}
	}
}

// verify answers a partition leader's verification (KIP-890): whether
// parts are in id's ongoing transaction with producer pid and epoch.
func (c *txnCoordinator) verify(id string, pid int64, epoch int16, parts []txn.TopicPartition) (kproto.ErrorCode, []kproto.ErrorCode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tp, code := c.lookupLocked(id)
	if code != kproto.CodeNone {
		return code, nil
	}
	t := tp.txns[id]
	if t == nil {
		return kproto.CodeInvalidProducerIDMapping, nil
	}
	return t.Verify(pid, epoch, parts)
}

// errNoProducerID: the id's epoch ran out between needsProducerID and
// the transition (the client retries).
var errNoProducerID = errors.New("no producer id allocated for this transition")

// needsProducerID reports whether an InitProducerId for id may need a new
// producer id: the id is unknown here, or its epoch is nearly spent.
func (c *txnCoordinator) needsProducerID(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	tp, code := c.lookupLocked(id)
	if code != kproto.CodeNone {
		return false
	}
	t := tp.txns[id]
	return t == nil || t.Cur.ProducerEpoch >= math.MaxInt16-1
}

// describe is id's current metadata: NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS or TRANSACTIONAL_ID_NOT_FOUND otherwise.
func (c *txnCoordinator) describe(id string) (txn.Metadata, kproto.ErrorCode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tp, code := c.lookupLocked(id)
	if code != kproto.CodeNone {
		return txn.Metadata{}, code
	}
	t := tp.txns[id]
	if t == nil || t.Cur.ProducerEpoch == txn.NoEpoch {
		return txn.Metadata{}, codeTransactionalIDNotFound
	}
	return t.Cur, kproto.CodeNone
}

// list is every transaction coordinated here, by id;
// COORDINATOR_LOAD_IN_PROGRESS while a partition loads.
func (c *txnCoordinator) list() (map[string]txn.Metadata, kproto.ErrorCode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]txn.Metadata{}
	for _, tp := range c.mu.parts {
		if tp.loading {
			return nil, kproto.CodeCoordinatorLoadInProgress
		}
		for id, t := range tp.txns {
			if t.Cur.ProducerEpoch != txn.NoEpoch {
				out[id] = t.Cur
			}
		}
	}
	return out, kproto.CodeNone
}
