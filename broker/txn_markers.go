package broker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/zkafka/zkafka/broker/txn"
	"github.com/zkafka/zkafka/kproto"
)

// Transaction markers: once PrepareCommit or PrepareAbort is in the log,
// the coordinator sends WriteTxnMarkers to the leader of every partition
// of the transaction, one request per leader carrying all of the
// transaction's partitions it leads, with coordinator_epoch the leader
// epoch of the id's __transaction_state partition, and sends again what
// is not answered NONE (leaders move, brokers restart) until every
// partition has its marker; then it writes CompleteCommit/CompleteAbort
// (Kafka's TransactionMarkerChannelManager and
// TransactionMarkerRequestCompletionHandler). A coordinator that stops
// leading the partition, or leads it in a new leader epoch (loaded again,
// with a sender of its own), stops sending and completes nothing: the
// next leader or epoch loads the Prepare state and sends the markers
// again. They are idempotent at the leaders only until the producer's
// next transaction writes there, which the Prepare state holds off
// (CONCURRENT_TRANSACTIONS) until that epoch's sender has every marker
// answered; a late marker of an older coordinator epoch is refused there
// (TRANSACTION_COORDINATOR_FENCED).

const (
	markerBackoffMin = 50 * time.Millisecond
	markerBackoffMax = time.Second
)

var errNoBroker = errors.New("the partition's leader is not a registered broker")

// startMarkers starts sending id's markers unless that already runs.
func (c *txnCoordinator) startMarkers(tp *txnPartition, id string) {
	c.mu.Lock()
	if tp.marking[id] {
		c.mu.Unlock()
		return
	}
	tp.marking[id] = true
	c.mu.Unlock()
	if !c.b.goTracked("txn-markers", func() { c.sendMarkers(tp, id) }) {
		c.mu.Lock()
		delete(tp.marking, id)
		c.mu.Unlock()
	}
}

// sendMarkers writes id's markers and then completes the transaction.
func (c *txnCoordinator) sendMarkers(tp *txnPartition, id string) {
	defer func() {
		c.mu.Lock()
		delete(tp.marking, id)
		c.notifyLocked()
		c.mu.Unlock()
	}()
	c.mu.Lock()
	t := tp.txns[id]
	if t == nil || !c.currentLocked(tp) || (t.Cur.State != txn.PrepareCommit && t.Cur.State != txn.PrepareAbort) {
		c.mu.Unlock()
		return
	}
	m := t.Cur
	c.mu.Unlock()
	remaining := map[txn.TopicPartition]bool{}
	for _, p := range m.Partitions {
		remaining[p] = true
	}
	backoff := markerBackoffMin
	for {
		if len(remaining) > 0 {
			if stop := c.markersRound(tp, m, remaining); stop {
				return
			}
		}
		if len(remaining) == 0 {
			code, _ := c.do(id, func(t *txn.Txn, nowMs int64) (*txn.Txn, txn.Step) {
				// Only the sender of the epoch that holds the Txn now
				// completes it: a sender of an earlier epoch of this
				// broker's leadership (its round answered after the
				// partition was loaded again) would complete it while
				// the new epoch's sender still has markers to write,
				// and those would land in the producer's next
				// transaction.
				if !c.currentLocked(tp) || t == nil || t.Cur.ProducerID != m.ProducerID ||
					t.Cur.ProducerEpoch != m.ProducerEpoch || t.Cur.State != m.State {
					return t, txn.Step{}
				}
				return t, t.MarkersDone(nowMs)
			})
			switch code {
			case kproto.CodeNone:
				return
			case kproto.CodeNotCoordinator, kproto.CodeCoordinatorLoadInProgress:
				return // the next leader completes it
			}
		}
		select {
		case <-c.b.done:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, markerBackoffMax)
		if !c.current(tp) {
			return
		}
	}
}

// markersRound sends one request to each leader of the remaining
// partitions and removes the ones answered; stop is true when a leader
// says this coordinator or epoch is stale, or tp is no longer current.
func (c *txnCoordinator) markersRound(tp *txnPartition, m txn.Metadata, remaining map[txn.TopicPartition]bool) (stop bool) {
	byLeader := map[int32][]txn.TopicPartition{}
	for p := range remaining {
		_, parts, ok := c.b.meta.topic(p.Topic)
		if !ok || int(p.Partition) >= len(parts) {
			delete(remaining, p) // the topic is gone: nothing to mark (Kafka skips it too)
			continue
		}
		if l := parts[p.Partition].leader; l >= 0 {
			byLeader[l] = append(byLeader[l], p)
		}
	}
	for leader, parts := range byLeader {
		if !c.current(tp) {
			return true // a request before this one outlived the epoch
		}
		codes, err := c.sendMarkerRequest(leader, tp.epoch, m, parts)
		if err != nil {
			c.b.log.Debug("WriteTxnMarkers not answered; sending again", "broker", leader, "err", err)
			continue
		}
		for p, code := range codes {
			switch code {
			case kproto.CodeNone, kproto.CodeUnsupportedForMessageFormat, kproto.CodeUnsupportedVersion:
				delete(remaining, p)
			case kproto.CodeInvalidProducerEpoch, codeTransactionCoordinatorFenced:
				c.b.log.Warn("transaction markers refused as stale; leaving the transaction to the next coordinator",
					"producer_id", m.ProducerID, "epoch", m.ProducerEpoch, "partition", p, "code", code)
				return true
			case kproto.CodeUnknownTopicOrPartition:
				if _, _, ok := c.b.meta.topic(p.Topic); !ok {
					delete(remaining, p)
				}
			}
		}
	}
	return false
}

// markerCall is one transaction's marker waiting in a leader's batch.
type markerCall struct {
	marker kmsg.WriteTxnMarkersRequestMarker
	done   chan markerResult // buffered (1)
}

type markerResult struct {
	codes map[txn.TopicPartition]kproto.ErrorCode
	err   error
}

// markerQueue collects the markers bound for one broker: while a request
// is in flight, markers of other transactions queue and go together in
// the next one (Kafka's TransactionMarkerChannelManager keeps one queue
// per broker the same way).
type markerQueue struct {
	mu      sync.Mutex
	queue   []*markerCall
	sending bool
}

// sendMarkerRequest has leader write m's marker on parts (in the next
// WriteTxnMarkers to it) and returns each partition's code.
func (c *txnCoordinator) sendMarkerRequest(leader int32, coordinatorEpoch int32, m txn.Metadata, parts []txn.TopicPartition) (map[txn.TopicPartition]kproto.ErrorCode, error) {
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = m.ProducerID, m.ProducerEpoch, m.State == txn.PrepareCommit, coordinatorEpoch
	for _, p := range parts {
		if n := len(mk.Topics); n == 0 || mk.Topics[n-1].Topic != p.Topic {
			t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			t.Topic = p.Topic
			mk.Topics = append(mk.Topics, t)
		}
		last := &mk.Topics[len(mk.Topics)-1]
		last.Partitions = append(last.Partitions, p.Partition)
	}
	call := &markerCall{marker: mk, done: make(chan markerResult, 1)}
	c.batches.Lock()
	mb := c.batches.m[leader]
	if mb == nil {
		mb = &markerQueue{}
		c.batches.m[leader] = mb
	}
	c.batches.Unlock()
	mb.mu.Lock()
	mb.queue = append(mb.queue, call)
	start := !mb.sending
	mb.sending = true
	mb.mu.Unlock()
	if start && !c.b.goTracked("txn-marker-batch", func() { c.sendBatches(leader, mb) }) {
		return nil, ErrServerClosed
	}
	select {
	case r := <-call.done:
		return r.codes, r.err
	case <-c.b.done:
		return nil, ErrServerClosed
	}
}

// sendBatches sends mb's queued markers, all that wait in one request,
// until the queue is empty.
func (c *txnCoordinator) sendBatches(leader int32, mb *markerQueue) {
	for {
		mb.mu.Lock()
		q := mb.queue
		mb.queue = nil
		if len(q) == 0 {
			mb.sending = false
			mb.mu.Unlock()
			return
		}
		mb.mu.Unlock()
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		for _, call := range q {
			req.Markers = append(req.Markers, call.marker)
		}
		resp, err := c.writeMarkers(leader, req)
		for _, call := range q {
			if err != nil {
				call.done <- markerResult{err: err}
				continue
			}
			out := map[txn.TopicPartition]kproto.ErrorCode{}
			for _, rm := range resp.Markers {
				if rm.ProducerID != call.marker.ProducerID {
					continue
				}
				for _, rt := range rm.Topics {
					for _, rp := range rt.Partitions {
						out[txn.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}] = kproto.ErrorCode(rp.ErrorCode)
					}
				}
			}
			call.done <- markerResult{codes: out}
		}
	}
}

// writeMarkers sends one WriteTxnMarkers to leader.
func (c *txnCoordinator) writeMarkers(leader int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	addr, ok := c.b.interBrokerAddr(leader)
	if !ok {
		return nil, errNoBroker
	}
	cl, err := c.client(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	go func() {
		select {
		case <-c.b.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return req.RequestWith(ctx, cl.SeedBrokers()[0])
}

// client is the kgo client of the broker at addr, made on first use.
func (c *txnCoordinator) client(addr string) (*kgo.Client, error) {
	c.clients.Lock()
	defer c.clients.Unlock()
	if cl := c.clients.m[addr]; cl != nil {
		return cl, nil
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("zkafka-txn-coordinator"), kgo.RequestRetries(0)}, c.b.interBrokerClientOpts()...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	c.clients.m[addr] = cl
	return cl, nil
}
